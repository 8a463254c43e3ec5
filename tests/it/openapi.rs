//! The OpenAPI description against the service's real answers: a client
//! generated from `GET /v1/openapi.json` gets what it says. A unit's life
//! is driven over HTTP (sale, steps, stop, check, redemption, receipts,
//! the block's seal, the games, prizes remaining, the head, a batch, the
//! operator's actions) with its refusals (a malformed and an unknown ID,
//! a second redemption, no token, a platform on an operator route, a
//! sale looked up under an unknown key), and every answer is:
//!
//! - **documented**: its status is one the description gives for that
//!   method and path;
//! - **valid**: its JSON body validates against that status's schema,
//!   the members' schemas derived from the types the handlers serialize
//!   (`schemars`), the refusals against the error object's (checked by
//!   this file's own `validate`).

use serde_json::{json, Value};

use crate::common::{agent, call, te_store, Server, TOKEN};

const OPERATOR: &str = "operator-token-openapi-0123456789";

/// One answer checked against the description: the schema of `method`
/// `template` at `status`, which must be documented.
fn conforms(doc: &Value, method: &str, template: &str, status: u16, body: &str) {
    let op = &doc["paths"][template][method.to_ascii_lowercase()];
    assert!(op.is_object(), "{method} {template} is not described");
    let answer = &op["responses"][status.to_string()];
    assert!(
        answer.is_object(),
        "{method} {template} answered {status}, which its description does not give: {body}"
    );
    let schema = &answer["content"]["application/json"]["schema"];
    let body: Value = serde_json::from_str(body)
        .unwrap_or_else(|e| panic!("{method} {template} {status}: not JSON ({e}): {body}"));
    let mut errors = Vec::new();
    validate(doc, schema, &body, "", &mut errors);
    assert!(
        errors.is_empty(),
        "{method} {template} {status}: the answer does not validate against its schema: {errors:?}\n{body}"
    );
}

/// Checks `value` against `schema` (the JSON Schema 2020-12 keywords the
/// description's answers use: `$ref` into the document, `allOf`, `anyOf`,
/// `oneOf`, `type`, `properties`, `required`, `additionalProperties`,
/// `items`, `enum`, `const`, `minimum`, `maximum`), pushing each failure
/// with where it is. A test's own checker: a crate that does this pulls
/// features into shared crates, and the README's two commands would build
/// twice (.ci/run checks they do not).
fn validate(doc: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    let Some(schema) = schema.as_object() else {
        if schema == &Value::Bool(false) {
            errors.push(format!("{at}: nothing is allowed here"));
        }
        return;
    };
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        let pointer = reference
            .strip_prefix('#')
            .expect("a reference into the document");
        let target = doc
            .pointer(pointer)
            .unwrap_or_else(|| panic!("{reference} is not in the document"));
        validate(doc, target, value, at, errors);
    }
    for sub in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        validate(doc, sub, value, at, errors);
    }
    for (keyword, exactly_one) in [("anyOf", false), ("oneOf", true)] {
        if let Some(subs) = schema.get(keyword).and_then(Value::as_array) {
            let passing = subs
                .iter()
                .filter(|sub| {
                    let mut e = Vec::new();
                    validate(doc, sub, value, at, &mut e);
                    e.is_empty()
                })
                .count();
            if passing == 0 || (exactly_one && passing > 1) {
                errors.push(format!("{at}: {passing} of the {keyword} schemas hold"));
            }
        }
    }
    if let Some(kinds) = schema.get("type") {
        let kinds: Vec<&str> = match kinds {
            Value::String(k) => vec![k.as_str()],
            Value::Array(ks) => ks.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let is = |kind: &str| match kind {
            "object" => value.is_object(),
            "array" => value.is_array(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "null" => value.is_null(),
            "number" => value.is_number(),
            "integer" => value.is_i64() || value.is_u64(),
            _ => false,
        };
        if !kinds.iter().any(|k| is(k)) {
            errors.push(format!("{at}: not of type {kinds:?}: {value}"));
        }
    }
    if let Some(expected) = schema.get("const") {
        if value != expected {
            errors.push(format!("{at}: {value} is not {expected}"));
        }
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        if !options.contains(value) {
            errors.push(format!("{at}: {value} is none of {options:?}"));
        }
    }
    if let (Some(n), Some(min)) = (
        value.as_f64(),
        schema.get("minimum").and_then(Value::as_f64),
    ) {
        if n < min {
            errors.push(format!("{at}: {n} is below {min}"));
        }
    }
    if let (Some(n), Some(max)) = (
        value.as_f64(),
        schema.get("maximum").and_then(Value::as_f64),
    ) {
        if n > max {
            errors.push(format!("{at}: {n} is above {max}"));
        }
    }
    if let Some(object) = value.as_object() {
        for name in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = name.as_str().unwrap_or_default();
            if !object.contains_key(name) {
                errors.push(format!("{at}: \"{name}\" is required"));
            }
        }
        let properties = schema.get("properties").and_then(Value::as_object);
        for (name, member) in object {
            let path = format!("{at}/{name}");
            match properties.and_then(|p| p.get(name)) {
                Some(sub) => validate(doc, sub, member, &path, errors),
                None => {
                    if let Some(extra) = schema.get("additionalProperties") {
                        validate(doc, extra, member, &path, errors);
                    }
                }
            }
        }
    }
    if let (Some(items), Some(array)) = (schema.get("items"), value.as_array()) {
        for (i, item) in array.iter().enumerate() {
            validate(doc, items, item, &format!("{at}/{i}"), errors);
        }
    }
}

/// The checker checks: a wrong type, a missing member, another constant
/// and an extra member where none is allowed are each found.
#[test]
fn the_answers_checker_finds_what_does_not_hold() {
    let doc = json!({"components": {"schemas": {"A": {
        "type": "object", "required": ["n"], "additionalProperties": false,
        "properties": {"n": {"type": "integer", "minimum": 0}, "k": {"const": "sale"}},
    }}}});
    let schema = json!({"$ref": "#/components/schemas/A"});
    let holds = |value: Value| {
        let mut errors = Vec::new();
        validate(&doc, &schema, &value, "", &mut errors);
        errors.is_empty()
    };
    assert!(holds(json!({"n": 1, "k": "sale"})));
    for wrong in [
        json!({"n": "1"}),
        json!({"k": "sale"}),
        json!({"n": 1, "k": "sale_lookup"}),
        json!({"n": 1, "other": true}),
        json!({"n": -1}),
    ] {
        assert!(!holds(wrong.clone()), "{wrong}");
    }
}

#[test]
fn every_answer_of_a_unit_s_life_is_documented_and_validates_against_its_schema() {
    let (_dir, store) = te_store(400);
    let tokens = format!("platform:{TOKEN}\noperator ops-1:{OPERATOR}\n");
    let server = Server::start_with_tokens::<&str>(&store, &tokens, &[]);
    let a = agent();
    let (status, text) = call(
        &a,
        "GET",
        &server.url("/v1/openapi.json"),
        Some(TOKEN),
        None,
    )
    .unwrap();
    assert_eq!(status, 200);
    let doc: Value = serde_json::from_str(&text).unwrap();
    // Every success answer with members names its schema.
    for path in ["/v1/sales", "/v1/redemptions", "/v1/plays/{id}/roll"] {
        let ok = &doc["paths"][path]["post"]["responses"]["200"]["content"]["application/json"]
            ["schema"];
        assert!(
            ok["allOf"].as_array().is_some_and(|all| all.len() == 2),
            "{path}: {ok}"
        );
    }
    let mut checked = 0;
    let mut ask =
        |method: &str, template: &str, path: &str, token: Option<&str>, body: Option<Value>| {
            let (status, text) = call(&a, method, &server.url(path), token, body).unwrap();
            conforms(&doc, method, template, status, &text);
            checked += 1;
            (status, serde_json::from_str::<Value>(&text).unwrap())
        };

    // A unit's life, on the platform's token.
    let te = json!({"game": "tresors-ensables"});
    let (status, sale) = ask(
        "POST",
        "/v1/sales",
        "/v1/sales",
        Some(TOKEN),
        Some(te.clone()),
    );
    assert_eq!(status, 200, "{sale}");
    let id = sale["id"].as_str().unwrap().to_string();
    let play = format!("/v1/plays/{id}");
    let (status, _) = ask("GET", "/v1/plays/{id}", &play, Some(TOKEN), None);
    assert_eq!(status, 200);
    let (status, _) = ask(
        "GET",
        "/v1/units/{id}",
        &format!("/v1/units/{id}"),
        Some(TOKEN),
        None,
    );
    assert_eq!(status, 200);
    let mut view = Value::Null;
    for step in 1..=60 {
        let (status, answer) = ask(
            "POST",
            "/v1/plays/{id}/roll",
            &format!("{play}/roll"),
            Some(TOKEN),
            Some(json!({"step": step})),
        );
        assert_eq!(status, 200, "{answer}");
        view = answer;
        if view["over"] == true {
            break;
        }
        if view["may_stop"] == true {
            let (status, stopped) = ask(
                "POST",
                "/v1/plays/{id}/stop",
                &format!("{play}/stop"),
                Some(TOKEN),
                Some(json!({})),
            );
            assert_eq!(status, 200, "{stopped}");
            view = stopped;
            break;
        }
    }
    assert_eq!(view["over"], true, "{view}");
    let (status, _) = ask(
        "GET",
        "/v1/units/{id}",
        &format!("/v1/units/{id}"),
        Some(TOKEN),
        None,
    );
    assert_eq!(status, 200);
    let unit = json!({ "id": id });
    let (status, paid) = ask(
        "POST",
        "/v1/redemptions",
        "/v1/redemptions",
        Some(TOKEN),
        Some(unit.clone()),
    );
    assert_eq!(status, 200, "{paid}");
    let (status, again) = ask(
        "POST",
        "/v1/redemptions",
        "/v1/redemptions",
        Some(TOKEN),
        Some(unit),
    );
    assert_eq!((status, &again["error"]), (409, &json!("already_redeemed")));
    // The reads after it, each answered 200.
    for (template, path) in [
        ("/v1/receipts/{id}", format!("/v1/receipts/{id}")),
        (
            "/v1/blocks/{game}/{emission}/{block}",
            "/v1/blocks/tresors-ensables/1/1".to_string(),
        ),
        ("/v1/games", "/v1/games".to_string()),
        (
            "/v1/remaining",
            "/v1/remaining?game=tresors-ensables".to_string(),
        ),
        ("/v1/ledger/head", "/v1/ledger/head".to_string()),
    ] {
        let (status, answer) = ask("GET", template, &path, Some(TOKEN), None);
        assert_eq!(status, 200, "{path}: {answer}");
    }
    let batch = json!({"units": [{"id": id}, {"id": "TE-1-1-5-XXXXXXXX"}]});
    let (status, _) = ask(
        "POST",
        "/v1/redemptions/batch",
        "/v1/redemptions/batch",
        Some(TOKEN),
        Some(batch),
    );
    assert_eq!(status, 200);

    // Refusals: each documented, each the error object.
    for (template, path, expected) in [
        ("/v1/units/{id}", "/v1/units/not-an-id".to_string(), 400),
        (
            "/v1/units/{id}",
            "/v1/units/TE-1-1-5-ABCDEFGH".to_string(),
            404,
        ),
        ("/v1/sales/{key}", "/v1/sales/no-such-key".to_string(), 404),
        ("/v1/plays/{id}", format!("/v1/plays/{id}"), 200),
    ] {
        let (status, answer) = ask("GET", template, &path, Some(TOKEN), None);
        assert_eq!(status, expected, "{path}: {answer}");
    }
    let (status, _) = ask("GET", "/v1/games", "/v1/games", None, None);
    assert_eq!(status, 401);
    let suspend = json!({"game": "tresors-ensables", "emission": 1, "reason": "schema check"});
    let (status, _) = ask(
        "POST",
        "/v1/operator/suspend",
        "/v1/operator/suspend",
        Some(TOKEN),
        Some(suspend.clone()),
    );
    assert_eq!(status, 403);

    // The operator's.
    let (status, acted) = ask(
        "POST",
        "/v1/operator/suspend",
        "/v1/operator/suspend",
        Some(OPERATOR),
        Some(suspend),
    );
    assert_eq!(status, 200, "{acted}");
    let (status, refused) = ask("POST", "/v1/sales", "/v1/sales", Some(TOKEN), Some(te));
    assert_eq!((status, &refused["error"]), (409, &json!("suspended")));
    let (status, _) = ask(
        "GET",
        "/v1/operator/remaining",
        "/v1/operator/remaining?game=tresors-ensables",
        Some(OPERATOR),
        None,
    );
    assert_eq!(status, 200);
    assert!(checked >= 20, "{checked} answers checked");
}
