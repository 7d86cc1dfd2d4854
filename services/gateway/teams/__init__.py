"""The Microsoft Teams surface of the gateway (Microsoft 365 Agents SDK, Adaptive Cards)."""
