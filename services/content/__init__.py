"""Content service: weekly micro-learning (article, slides, infographic) per topic.

Stored form (`store.content`, one row per topic id): each part (`article`, `slides`,
`infographic`) is the JSON of its pydantic model (services/content/models.py) plus a
`meta` object: `prompt_version`, `generated_at` (ISO UTC), `topic_fingerprint`,
`offline` (true when the offline provider wrote it), `model`, and for refined articles
`refined_at`, `refined_by`, `refinements`, `refine_prompt_version`. The infographic part
also carries `image`: `{"format": "png", "width", "height", "sha256", "base64"}`, the
rendered picture. `content.ready` names what it made in `content_ref` =
"<topic id>/<content type>"; its `topic_id` is the resolved id (a free-text request
becomes a custom topic with a new id).

Settings keys owned here: `content.custom_topics` (custom topic records by id),
`content.handled_requests` (request event ids answered, for idempotency),
`content.locks` (per-topic generation leases). Admin refinement is served on
`rpc.content.refine` (contract in shared/bus/content_rpc.py).
"""
