"""NATS users and permissions: one nkey user per service and client, grants from the registry."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import nkeys

from shared.bus.objects import SOURCES_BUCKET as SOURCES_BUCKET
from shared.bus.registry import REGISTRY
from shared.bus.rpc_chunks import MAX_CHUNKS
from shared.bus.streams import STREAMS, stream_for_subject
from shared.bus.subjects import FAILED_PREFIX, RPC_PREFIX
from shared.errors import BadInputError, ConfigError

LIMITS_BUCKET = "r42_limits"
CLAIMS_BUCKET = "r42_gateway_claims"
USERS_DIR = "users"
TAIL_USER = "tail"
"""The reader `r42 events tail` connects as."""
_USER_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,39}$")
DEAD_LETTERS = f"{FAILED_PREFIX}>"
EVERY_EVENT = tuple(subject for spec in STREAMS for subject in spec.subjects)
"""Every event subject, as the streams' filters (`source.>` …); `rpc.` is never among them."""
ClientRole = Literal["uploader", "reader"]


@dataclass(frozen=True)
class Grants:
    """What one user may do, in logical terms; `permissions()` turns it into server config."""

    publishes: tuple[str, ...] = ()
    consumes: tuple[str, ...] = ()
    watches: tuple[str, ...] = ()
    """Core subscriptions on event subjects (taps that never take work from a consumer)."""
    serves: tuple[str, ...] = ()
    calls: tuple[str, ...] = ()
    kv: tuple[str, ...] = ()
    objects: tuple[str, ...] = ()
    admin: bool = False
    """Full JetStream API (stream set-up): only the runtime itself."""

    def __post_init__(self) -> None:
        for subject in (*self.publishes, *self.consumes, *self.watches):
            if subject not in REGISTRY and subject not in EVERY_EVENT:
                raise ConfigError(f"grant names {subject!r}, which the event registry lacks")
        for subject in (*self.serves, *self.calls):
            if not subject.startswith(RPC_PREFIX):
                raise ConfigError(f"rpc grant {subject!r} must start with {RPC_PREFIX}")

    def permissions(self, user: str) -> dict[str, object]:
        """The nats-server `permissions` block of this user."""
        pub: list[str] = [*self.publishes, *self.calls, "$JS.API.INFO", "$JS.API.STREAM.NAMES"]
        sub: list[str] = [f"{inbox_prefix(user)}.>", *self.serves, *self.watches]
        sub += [s for s in self.consumes if s not in sub]
        streams = sorted({stream_for_subject(s).name for s in (*self.consumes, *self.publishes)})
        # Every service checks the streams exist when it starts (stream info is read-only).
        if self.publishes or self.consumes:
            pub += [f"$JS.API.STREAM.INFO.{spec.name}" for spec in STREAMS]
        for name in sorted({stream_for_subject(s).name for s in self.consumes}):
            pub += _consumer_api(name)
        del streams
        for bucket in self.kv:
            stream = f"KV_{bucket}"
            pub += [f"$KV.{bucket}.>", f"$JS.API.STREAM.CREATE.{stream}",
                    f"$JS.API.STREAM.INFO.{stream}", f"$JS.API.STREAM.MSG.GET.{stream}",
                    f"$JS.API.DIRECT.GET.{stream}", f"$JS.API.DIRECT.GET.{stream}.>",
                    *_consumer_api(stream)]  # fmt: skip
        for bucket in self.objects:
            stream = f"OBJ_{bucket}"
            pub += [f"$O.{bucket}.>", f"$JS.API.STREAM.INFO.{stream}",
                    f"$JS.API.STREAM.MSG.GET.{stream}", f"$JS.API.STREAM.PURGE.{stream}",
                    f"$JS.API.DIRECT.GET.{stream}", f"$JS.API.DIRECT.GET.{stream}.>",
                    *_consumer_api(stream)]  # fmt: skip
        if self.admin:
            pub += ["$JS.API.>"]
        perms: dict[str, object] = {
            "publish": {"allow": _dedupe(pub)},
            "subscribe": {"allow": _dedupe(sub)},
        }
        if self.serves:
            # Answer a request on its reply subject (the caller's inbox) within 5 min (a chat
            # turn with tool calls can take longer than one LLM timeout): the reply, after at
            # most MAX_CHUNKS streamed chunks when the caller asked for them.
            perms["allow_responses"] = {"max": MAX_CHUNKS + 1, "expires": "5m"}
        return perms


def _consumer_api(stream: str) -> list[str]:
    # Durable pull consumers (create, info, fetch), their acks, and ordered consumers' flow
    # control, scoped to one stream.
    return [
        f"$JS.API.CONSUMER.CREATE.{stream}", f"$JS.API.CONSUMER.CREATE.{stream}.>",
        f"$JS.API.CONSUMER.DURABLE.CREATE.{stream}.>", f"$JS.API.CONSUMER.INFO.{stream}.>",
        f"$JS.API.CONSUMER.MSG.NEXT.{stream}.>", f"$JS.API.CONSUMER.DELETE.{stream}.>",
        f"$JS.ACK.{stream}.>", f"$JS.FC.{stream}.>",
    ]  # fmt: skip


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


# Request/reply subjects are `rpc.<service>.<method>`: a service serves its own namespace, so a
# new method needs no new grant; callers get the namespaces they call.
_CHAT = ("rpc.r42.>",)
_REFINE = ("rpc.content.>",)
_SYNC = ("rpc.extractor.>",)
_QUIZ = ("rpc.quiz.>",)
READY_SUBJECTS: Mapping[str, tuple[str, ...]] = {
    "r42": ("rpc.r42.chat", "rpc.r42.proposal", "rpc.r42.clear"),
    "content": ("rpc.content.refine",),
    "extractor": ("rpc.extractor.sync_handbook",),
    "quiz": ("rpc.quiz.status", "rpc.quiz.leaderboard"),
}
"""What a person waits on: `r42 up` is "up" only once these have a responder."""
_LLM = "llm.call.logged"
_SOURCE_OUTCOMES = ("source.progress", "source.completed", "source.failed")
_GATEWAY_PUBLISHES = (
    "source.uploaded", "source.cancelled", "kb.delta.proposed", "kb.delta.decided",
    "content.requested", "quiz.requested", "quiz.answered",
)  # fmt: skip
_GATEWAY_WATCHES = (
    *_SOURCE_OUTCOMES, "content.ready", "quiz.ready", "quiz.scored", "kb.updated",
    "kb.delta.applied",
)  # fmt: skip

SERVICE_GRANTS: Mapping[str, Grants] = {
    "extractor": Grants(
        publishes=(*_SOURCE_OUTCOMES, "source.uploaded", "chunk.extracted", "kb.updated",
                   "kb.delta.applied", _LLM, DEAD_LETTERS),
        consumes=("source.uploaded", "source.cancelled", "chunk.extracted", "kb.delta.proposed",
                  "kb.delta.decided"),
        serves=_SYNC, kv=(LIMITS_BUCKET,), objects=(SOURCES_BUCKET,),
    ),
    "r42": Grants(
        publishes=("kb.delta.proposed", "kb.delta.decided", _LLM, DEAD_LETTERS),
        consumes=("kb.updated",), serves=_CHAT, kv=(LIMITS_BUCKET,),
    ),
    "content": Grants(
        publishes=("content.ready", _LLM, DEAD_LETTERS),
        consumes=("content.requested", "kb.updated"), serves=_REFINE, kv=(LIMITS_BUCKET,),
    ),
    "quiz": Grants(
        publishes=("quiz.ready", "quiz.scored", _LLM, DEAD_LETTERS),
        consumes=("quiz.requested", "quiz.answered", "kb.updated"), serves=_QUIZ,
        kv=(LIMITS_BUCKET,),
    ),
    "telemetry": Grants(publishes=(DEAD_LETTERS,), consumes=(_LLM,), kv=(LIMITS_BUCKET,)),
    "gateway": Grants(
        publishes=(*_GATEWAY_PUBLISHES, _LLM, DEAD_LETTERS), watches=_GATEWAY_WATCHES,
        # Durable consumers: Slack's answers survive a gateway restart (slack/handlers.py).
        consumes=(*_SOURCE_OUTCOMES, "kb.delta.applied", "content.ready", "quiz.ready",
                  "quiz.scored"),
        calls=(*_CHAT, *_REFINE, *_SYNC, *_QUIZ),
        kv=(CLAIMS_BUCKET, LIMITS_BUCKET), objects=(SOURCES_BUCKET,),
    ),
}  # fmt: skip
"""Each service's part of DESIGN's event table (checked against the registry on import)."""

# The operator's CLI (and the console inside `r42 up`): what the gateway does, plus watching
# every event; the runtime user also sets up streams and buckets.
CLI_GRANTS = Grants(
    publishes=(*_GATEWAY_PUBLISHES, _LLM), watches=EVERY_EVENT, consumes=_SOURCE_OUTCOMES,
    calls=(*_CHAT, *_REFINE, *_SYNC, *_QUIZ), kv=(CLAIMS_BUCKET, LIMITS_BUCKET),
    objects=(SOURCES_BUCKET,),
)  # fmt: skip
RUNTIME_GRANTS = Grants(admin=True)
ROLE_GRANTS: Mapping[str, Grants] = {
    "uploader": Grants(publishes=("source.uploaded",), watches=_SOURCE_OUTCOMES,
                       objects=(SOURCES_BUCKET,)),
    "reader": Grants(watches=EVERY_EVENT),
}  # fmt: skip


def inbox_prefix(user: str) -> str:
    """The custom inbox prefix of a user: replies to it reach this user only."""
    return f"_INBOX_{user}"


def check_user_name(name: str) -> str:
    """A user name usable in file names and inbox subjects, else BadInputError."""
    if not _USER_RE.fullmatch(name):
        raise BadInputError(
            f"user name {name!r} is invalid: 1-40 lowercase letters, digits, '-' or '_'"
        )
    return name


@dataclass(frozen=True)
class NatsUser:
    """One user's identity on disk: the seed file (0600) and its public nkey."""

    name: str
    seed_file: Path
    public_key: str
    grants: Grants = field(compare=False)

    @property
    def inbox_prefix(self) -> str:
        """Where this user's replies arrive."""
        return inbox_prefix(self.name)


def _meta_path(users_dir: Path) -> Path:
    return users_dir / "clients.json"


def ensure_user(users_dir: Path, name: str, grants: Grants) -> NatsUser:
    """Load the user's seed, creating it (mode 0600) on first use."""
    check_user_name(name)
    users_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    seed_file = users_dir / f"{name}.nk"
    if not seed_file.exists():
        seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
        fd = os.open(seed_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(seed + b"\n")
    os.chmod(seed_file, 0o600)
    try:
        pair = nkeys.from_seed(bytearray(seed_file.read_bytes().strip()))
    except nkeys.NkeysError as exc:
        raise ConfigError(f"{seed_file} is not an nkey user seed: {type(exc).__name__}") from None
    return NatsUser(name, seed_file, pair.public_key.decode(), grants)


def add_client(users_dir: Path, name: str, role: ClientRole) -> NatsUser:
    """Create (or keep) an external client user with a role, recorded in clients.json."""
    if role not in ROLE_GRANTS:
        raise BadInputError(f"unknown role {role!r}; use {' or '.join(ROLE_GRANTS)}")
    check_user_name(name)
    reserved = {*SERVICE_GRANTS, "cli", "runtime", TAIL_USER}
    if name in reserved:
        raise BadInputError(f"user name {name!r} is reserved for the runtime")
    clients = read_clients(users_dir)
    if clients.get(name, role) != role:
        raise BadInputError(f"client {name!r} exists with role {clients[name]}; pick another name")
    user = ensure_user(users_dir, name, ROLE_GRANTS[role])
    clients[name] = role
    path = _meta_path(users_dir)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(clients, indent=2, sort_keys=True))
    os.replace(tmp, path)
    return user


def read_clients(users_dir: Path) -> dict[str, ClientRole]:
    """The external clients created with `r42 creds`, name → role."""
    try:
        raw = json.loads(_meta_path(users_dir).read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{_meta_path(users_dir)} is unreadable: {exc}") from None
    return {str(k): v for k, v in raw.items() if v in ROLE_GRANTS}


def all_users(users_dir: Path, services: Iterable[str]) -> list[NatsUser]:
    """The runtime, the CLI, each service (known or not) and every recorded client."""
    users = [ensure_user(users_dir, "runtime", RUNTIME_GRANTS),
             ensure_user(users_dir, "cli", CLI_GRANTS),
             ensure_user(users_dir, TAIL_USER, ROLE_GRANTS["reader"])]  # fmt: skip
    for name in services:
        users.append(ensure_user(users_dir, name, SERVICE_GRANTS.get(name, Grants())))
    for name, role in sorted(read_clients(users_dir).items()):
        users.append(ensure_user(users_dir, name, ROLE_GRANTS[role]))
    return users


def authorization_block(users: Iterable[NatsUser]) -> str:
    """The `authorization { users = [...] }` server config (JSON is valid NATS config)."""
    entries = [{"nkey": u.public_key, "permissions": u.grants.permissions(u.name)} for u in users]
    return "authorization " + json.dumps({"users": entries}, indent=2) + "\n"


def write_deploy_config(out_dir: Path, services: Iterable[str] = SERVICE_GRANTS) -> Path:
    """Seeds for every user and `auth.conf` for an external server (deploy/)."""
    users_dir = out_dir / USERS_DIR
    block = authorization_block(all_users(users_dir, services))
    conf = out_dir / "auth.conf"
    fd = os.open(conf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(block)
    return conf


def main(argv: list[str] | None = None) -> int:
    """`python -m shared.runtime.nats_auth OUT_DIR`: users and auth.conf for deploy/."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m shared.runtime.nats_auth")
    parser.add_argument("out_dir", type=Path, help="where users/*.nk and auth.conf go")
    args = parser.parse_args(argv)
    conf = write_deploy_config(args.out_dir)
    print(f"wrote {conf} and {args.out_dir / USERS_DIR}/*.nk (keep them secret)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
