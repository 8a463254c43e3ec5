"""A client generated from GET /v1/openapi.json (openapi-python-client)
sells, plays and redeems a unit of each game, reading typed answers.

    python3 sell_play_redeem.py PACKAGE_DIR BASE_URL TOKEN

PACKAGE_DIR holds the generated package `client`. Run by
.ci/schemathesis.sh against a live node (docs/API.md §The description).
"""

import sys
import uuid

sys.path.insert(0, sys.argv[1])

from client import AuthenticatedClient  # noqa: E402
from client.api.default import (  # noqa: E402
    post_v1_plays_id_roll,
    post_v1_plays_id_stop,
    post_v1_redemptions,
    post_v1_sales,
)
from client.models import (  # noqa: E402
    Error,
    PostV1PlaysIdRollResponse200,
    PostV1PlaysIdStopResponse200,
    PostV1RedemptionsBody,
    PostV1RedemptionsResponse200,
    PostV1SalesBody,
    PostV1SalesBodyGame,
    PostV1SalesResponse200,
)

base, token = sys.argv[2], sys.argv[3]
api = AuthenticatedClient(base_url=base, token=token, raise_on_unexpected_status=True)


def key():
    return str(uuid.uuid4())


def expect(answer, kind):
    if isinstance(answer, Error):
        raise SystemExit(f"refused: {answer.to_dict()}")
    if not isinstance(answer, kind):
        raise SystemExit(f"not a {kind.__name__}: {answer!r}")
    return answer


def sell(game, price=None):
    body = PostV1SalesBody(game=PostV1SalesBodyGame(game))
    if price is not None:
        body = PostV1SalesBody(game=PostV1SalesBodyGame(game), price=price)
    sale = expect(post_v1_sales.sync(client=api, body=body, idempotency_key=key()), PostV1SalesResponse200)
    assert sale.kind == "sale" and sale.game == game, sale.to_dict()
    return sale


def redeem(unit_id):
    body = PostV1RedemptionsBody(id=unit_id)
    paid = expect(post_v1_redemptions.sync(client=api, body=body, idempotency_key=key()),
                  PostV1RedemptionsResponse200)
    assert paid.kind == "redemption" and paid.id == unit_id, paid.to_dict()
    again = post_v1_redemptions.sync(client=api, body=body, idempotency_key=key())
    assert isinstance(again, Error) and again.to_dict()["error"] == "already_redeemed", again
    return paid


# Trésors Ensablés: sold, played step by step (stopped once allowed), paid.
sale = sell("tresors-ensables")
view = None
for step in range(1, 61):
    view = expect(post_v1_plays_id_roll.sync(sale.id, client=api, body={"step": step}, idempotency_key=key()),
                  PostV1PlaysIdRollResponse200)
    if view.over:
        break
    if view.may_stop:
        view = expect(post_v1_plays_id_stop.sync(sale.id, client=api, idempotency_key=key()),
                      PostV1PlaysIdStopResponse200)
        break
assert view is not None and view.over, view
paid = redeem(sale.id)
assert paid.prize == view.prize, (paid.prize, view.prize)
print(f"tresors-ensables {sale.id}: steps played: {view.rolls}, paid {paid.prize} €")

# L'île au trésor at 1 €: sold (its whole unit shown), paid.
sale = sell("ile-au-tresor", "1")
paid = redeem(sale.id)
print(f"ile-au-tresor {sale.id}: paid {paid.prize} € ({paid.lot or 'no lot'})")
