"""The eval suites, one module each (see evals/suite.py for the contract)."""
