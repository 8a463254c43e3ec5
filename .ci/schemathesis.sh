#!/usr/bin/env bash
# A client generated from the description, then schemathesis (both PyPI),
# against a live `issuer serve` (issue 39; docs/API.md §The description).
#
# First openapi-python-client generates a Python client from GET
# /v1/openapi.json, and tests/client/sell_play_redeem.py sells, plays and
# redeems a unit of each game with it, reading its typed answers.
#
# Then schemathesis: every route of GET /v1/openapi.json, requests made
# from its schemas (its examples, the coverage phase's boundary values,
# then fuzzing), each answer checked: no 5xx, every status documented for
# its route, every body valid against that status's schema, the content
# type documented, and requests the schemas refuse refused. Once with a
# platform's token, once with the operator's (the operator routes).
#
# Not checked: `positive_data_acceptance` (a request valid by the schemas
# answered 2xx): a request can be schema-valid and still be refused for a
# fact the schema cannot hold (a price the game is not sold at, a unit ID
# whose check code is wrong, a key reused for another request); those
# refusals are documented statuses, which the checks above hold.
#   EXAMPLES   requests per route and phase (default 30)
set -euo pipefail
cd "$(dirname "$0")/.."
EXAMPLES=${EXAMPLES:-30}
command -v st >/dev/null 2>&1 || python3 -m pip install --quiet schemathesis
command -v openapi-python-client >/dev/null 2>&1 || python3 -m pip install --quiet openapi-python-client
ISSUER=$PWD/target/release/issuer
[ -x "$ISSUER" ] || cargo build --release --locked --quiet -p ticket-issuer --bin issuer
work=$(mktemp -d /tmp/schemathesis-XXXXXX)
server=""
stop() {
    [ -z "$server" ] || kill "$server" 2>/dev/null || true
    rm -rf "$work"
}
trap stop EXIT
store=$work/store
"$ISSUER" --store "$store" keygen >/dev/null
"$ISSUER" --store "$store" generate --game tresors-ensables --emission 1 --block 1 --units 2000 --quiet >/dev/null
"$ISSUER" --store "$store" close --emission 1 >/dev/null
"$ISSUER" --store "$store" generate --game ile-au-tresor --emission 2 --block 1 --price 1 --quiet >/dev/null
"$ISSUER" --store "$store" close --emission 2 >/dev/null
platform="platform-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
operator="operator-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
printf 'platform:%s\noperator ops-1:%s\n' "$platform" "$operator" >"$work/tokens"
chmod 600 "$work/tokens"
"$ISSUER" --store "$store" serve --listen 127.0.0.1:0 --token-file "$work/tokens" \
    >"$work/out" 2>"$work/err" &
server=$!
for _ in $(seq 100); do [ -s "$work/out" ] && break; sleep 0.05; done
[ -s "$work/out" ] || { cat "$work/err" >&2; exit 1; }
url=$(sed 's/^listening on //' "$work/out")
curl -sf -H "Authorization: Bearer $platform" "$url/v1/openapi.json" >"$work/openapi.json"
# The generated client, before schemathesis suspends or withdraws anything.
(cd "$work" && openapi-python-client generate --path openapi.json --meta none \
    --output-path client >"$work/generate.log" 2>&1) || { cat "$work/generate.log" >&2; exit 1; }
python3 tests/client/sell_play_redeem.py "$work" "$url" "$platform"
for token in "$platform" "$operator"; do
    st run "$work/openapi.json" --url "$url" -H "Authorization: Bearer $token" \
        --max-examples "$EXAMPLES" --phases examples,coverage,fuzzing --seed 1 \
        --exclude-checks positive_data_acceptance --no-color
done
# The node answered every one of them: it is still up.
kill -0 "$server"
echo "generated client: sold, played and paid; schemathesis: every route, both roles: no 5xx, every status documented, every answer valid"
