"""`python -m services.extractor`: run the extractor service."""

from services.extractor.app import main

if __name__ == "__main__":
    main()
