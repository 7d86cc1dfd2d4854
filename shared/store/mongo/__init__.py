"""MongoDB adapter (PyMongo's AsyncMongoClient; motor is end-of-life)."""

from shared.store.mongo.migrations import LATEST_VERSION
from shared.store.mongo.queries import database_name, supports_transactions, with_database
from shared.store.mongo.store import MongoStore

__all__ = [
    "LATEST_VERSION",
    "MongoStore",
    "database_name",
    "supports_transactions",
    "with_database",
]
