"""R42 chat service: answers over `rpc.r42.chat` from the knowledge graph, proposes KG edits."""
