"""`python -m services.quiz`: run the quiz service until SIGTERM."""

from services.quiz.app import build
from shared.runtime.service import service_main

if __name__ == "__main__":
    service_main("quiz", build=build)
