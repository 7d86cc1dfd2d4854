"""`python -m services.r42`."""

from services.r42.app import on_started, register
from shared.runtime.service import service_main

if __name__ == "__main__":
    service_main("r42", register=register, on_started=on_started)
