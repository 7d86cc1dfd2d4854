"""Action, block and view ids shared by the block builders and the Slack listeners."""

from __future__ import annotations

import re


def matching(*ids: str, tail: str = "") -> re.Pattern[str]:
    """The pattern a listener matches: one of `ids` followed by `tail` (a regex; "" for exact)."""
    return re.compile(f"^({'|'.join(re.escape(i) for i in ids)}){tail}$")


FEEDBACK = "r42_feedback"
FEEDBACK_VIEW = "r42_feedback_reason"
PROPOSAL_YES = "r42_proposal_yes"
PROPOSAL_NO = "r42_proposal_no"
SUGGESTION_APPROVE = "r42_suggestion_approve"
SUGGESTION_REJECT = "r42_suggestion_reject"
QUIZ_ANSWER_PREFIX = "r42_quiz_answer_"
QUIZ_ANSWER_RE = matching(QUIZ_ANSWER_PREFIX, tail=r"\d")
QUIZ_START = "r42_quiz_start"
QUIZ_BANK = "r42_quiz_bank_regenerate"
SLIDE_PREV = "r42_slide_prev"
SLIDE_NEXT = "r42_slide_next"
LEARN_PREFIX = "r42_learn_"
LEARN_RE = matching(LEARN_PREFIX, tail="(article|slides|infographic)")
REFINE_OPEN = "r42_refine_open"
SOURCE_CANCEL_PREFIX = "r42_source_cancel_"
SOURCE_CANCEL_RE = matching(SOURCE_CANCEL_PREFIX, tail=r"\d+")
GRAPH_FOLLOW_PREFIX = "r42_graph_follow_"
GRAPH_FOLLOW_RE = matching(GRAPH_FOLLOW_PREFIX, tail=r"\d+")

PLAN_PICK_PREFIX = "r42_plan_pick_"
PLAN_PICK_RE = matching(PLAN_PICK_PREFIX, tail=r"\d+")
PLAN_APPLY = "r42_plan_apply"
PLAN_DISCARD = "r42_plan_discard"
PLAN_UNDO = "r42_plan_undo"

STALE_PICK_PREFIX = "r42_stale_pick_"
STALE_PICK_RE = matching(STALE_PICK_PREFIX, tail=r"\d+")
STALE_REGENERATE = "r42_stale_regenerate"

CURRICULUM_EDIT = "r42_curriculum_edit"
CURRICULUM_CLEAR = "r42_curriculum_clear"
CURRICULUM_VIEW = "r42_curriculum"

CLEAR_CONFIRM = "r42_clear_confirm"
CLEAR_CANCEL = "r42_clear_cancel"

INGEST_VIEW = "r42_ingest"
REFINE_VIEW = "r42_refine"

BLOCK_PROPOSAL = "r42_proposal"
BLOCK_PROPOSAL_ACTIONS = "r42_proposal_actions"
BLOCK_FEEDBACK = "r42_feedback"
BLOCK_REVIEW_ACTIONS = "r42_review_actions"
BLOCK_QUIZ_ACTIONS = "r42_quiz_actions"
