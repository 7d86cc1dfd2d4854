"""`python -m services.r42`."""

from services.r42.app import build
from shared.runtime.service import service_main

if __name__ == "__main__":
    service_main("r42", build=build)
