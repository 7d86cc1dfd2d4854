"""`python -m services.telemetry`."""

from services.telemetry.app import build
from shared.runtime.service import service_main

if __name__ == "__main__":
    service_main("telemetry", build=build)
