"""The gateway: R42 in Slack (Bolt, Socket Mode or HTTP) and in the terminal (console).

Both adapters use one client layer (client.GatewayClient) so features stay the same.
"""
