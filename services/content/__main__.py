"""`python -m services.content`."""

from services.content.app import on_started, register
from shared.runtime.service import service_main

if __name__ == "__main__":
    service_main("content", register=register, on_started=on_started)
