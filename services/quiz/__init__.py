"""The quiz service: question generation (gate, shuffle, dedup), weekly quizzes and scoring.

Modules: `models` (the `emit_quiz_questions` tool model), `gate` (quality gate, shuffle,
dedup key), `generation` (LLM → bank), `selection` (the week's ten questions), `attempts`
(start, answer, expire), `offline` (the offline provider's questions), `app` / `handlers`
(bus wiring). Nothing here runs at import.
"""
