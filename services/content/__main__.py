"""`python -m services.content`."""

from services.content.app import build
from shared.runtime.service import service_main

if __name__ == "__main__":
    service_main("content", build=build)
