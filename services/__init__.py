"""R42 services: gateway, extractor, content, quiz, r42 — they talk only over the bus."""
