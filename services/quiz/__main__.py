"""`python -m services.quiz`: run the quiz service until SIGTERM."""

from services.quiz.app import on_started, register
from shared.runtime.service import service_main

if __name__ == "__main__":
    service_main("quiz", register=register, on_started=on_started)
