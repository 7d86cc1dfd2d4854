"""The KG owner's refusals of graph requests: a typed reason plus its Dutch wording.

Chat surfaces (Slack, Teams, the console) show the message as it comes; the CLI words the
same `code` and `params` in English (services/cli/owner_words.py). One table per language,
both keyed by shared.bus.graph_rpc.GraphErrorCode.
"""

from __future__ import annotations

from shared.bus.graph_rpc import GraphErrorCode
from shared.errors import BadInputError

DUTCH: dict[str, str] = {
    "not_admin": "alleen beheerders mogen de kennisgraaf analyseren of wijzigen",
    "analysis_running": "er loopt al een analyse; probeer het straks opnieuw",
    "plan_unknown": "dit plan is onbekend of verlopen (plannen blijven een dag); analyseer opnieuw",
    "nothing_to_apply": "de gekozen acties veranderen niets (meer); er is niets toegepast",
    "over_bound": (
        "deze selectie verwijdert {deleting} van {size} onderwerpen; de grens is {bound} "
        "(10 % van de graaf, minstens 5, hoogstens 20). Er is niets toegepast: kies minder "
        "verwijderingen of samenvoegingen"
    ),
    "graph_changed": (
        "de kennisgraaf is veranderd sinds deze analyse; er is niets toegepast. Analyseer opnieuw"
    ),
    "no_such_change": "er is geen wijziging {undo_id} om ongedaan te maken",
}


def refusal(code: GraphErrorCode, **params: str | int) -> BadInputError:
    """A refusal to raise: Dutch message, typed code and params."""
    return BadInputError(DUTCH[code].format(**params)).with_code(code, **params)
