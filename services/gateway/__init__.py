"""The gateway: R42's surfaces over one core.

core/ is the client API and the views every surface renders; slack/ (Bolt, Socket Mode or
HTTP) and console/ (the terminal) are surfaces. No surface imports another.
"""
