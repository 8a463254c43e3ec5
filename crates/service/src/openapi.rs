//! The service's machine-readable description (OpenAPI 3.1, served at
//! `GET /v1/openapi.json`), made from the same route table the router is
//! built from (`routes/mod.rs`, each resource giving its rows): a route
//! cannot be served undescribed, nor described and not served.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde_json::{json, Map, Value};

/// The schema of `T`, as a route's [`RouteDoc::schema`]: a `$ref` into
/// the document's components.
pub fn schema_of<T: JsonSchema>(generator: &mut SchemaGenerator) -> Schema {
    generator.subschema_for::<T>()
}

/// One route as the description gives it.
pub struct RouteDoc {
    /// `GET` or `POST`.
    pub method: &'static str,
    /// The path, with `{id}`-style parameters (axum's and OpenAPI's syntax
    /// agree).
    pub path: &'static str,
    /// What it does.
    pub summary: &'static str,
    /// The JSON body it takes (a JSON Schema), if any.
    pub body: Option<Value>,
    /// Whether it takes an `Idempotency-Key` header (docs/API.md
    /// §Idempotency).
    pub idempotent: bool,
    /// Query parameters: (name, JSON Schema, description).
    pub query: &'static [(&'static str, &'static str, &'static str)],
    /// Answers: (status, the body's `kind`, what it means).
    pub answers: &'static [(u16, &'static str, &'static str)],
    /// The refusals it gives beside them (error objects).
    pub refusals: &'static [(u16, &'static str, &'static str)],
    /// The JSON Schema of its success answer's members, derived from the
    /// type the handler serializes (`None`: a body that is not JSON, or
    /// members described by `kind` alone).
    pub schema: Option<fn(&mut SchemaGenerator) -> Schema>,
    /// Answered without a token when the node runs `--public-health`.
    pub public_health: bool,
    /// Answered without a token when the node runs `--public-log`.
    pub public_log: bool,
}

/// The refusals every route may give beside its own answers.
const COMMON: [(u16, &str, &str); 6] = [
    (401, "error", "no or a wrong bearer token (`unauthorized`)"),
    (403, "error", "a token without the route's role (`forbidden`)"),
    (408, "error", "the body did not arrive within --body-timeout (`body_timeout`)"),
    (413, "error", "a body over 2 MB (`body_too_large`)"),
    (500, "error", "the node failed (`internal`), or its configuration is refused (`ledger_login_refused`, `emission_of_another_ledger`)"),
    (503, "error", "overloaded, or the ledger unavailable (`overloaded`, `ledger_unavailable`, `ledger_outcome_unknown`); Retry-After"),
];

/// The OpenAPI 3.1 document of `routes`.
#[must_use]
pub fn document<'r>(routes: impl IntoIterator<Item = &'r RouteDoc>) -> Value {
    // No boolean schemas (`true` for any JSON): code generators want
    // objects (`{}`).
    let mut generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.definitions_path = "#/components/schemas/".into())
        .with_transform(schemars::transform::ReplaceBoolSchemas::default())
        .into_generator();
    let error = generator.subschema_for::<ticket_issuer_core::error::ErrorReport>();
    let mut paths = Map::new();
    for r in routes {
        // OpenAPI has no wildcard: axum's `{*path}` is a `{path}` there.
        let item = paths
            .entry(r.path.replace("{*", "{"))
            .or_insert_with(|| Value::Object(Map::new()));
        let members = r.schema.map(|f| f(&mut generator).to_value());
        item[r.method.to_ascii_lowercase()] = operation(r, members);
    }
    // The settings' transforms applied to every definition.
    let mut schemas: Map<String, Value> = generator.take_definitions(true).into_iter().collect();
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "ticket-issuer",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Sales, plays and redemption of pre-decided instant-game units (docs/API.md). Every JSON body has `kind` and `schema: 1`; a refusal is the error object (`kind: \"error\"`, `error`, `category`, `message`).",
        },
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": with_envelopes(&mut schemas, error.to_value()),
        },
        "security": [{"bearer": []}],
        "paths": paths,
    })
}

/// The components' schemas: the answers' types (`schemas`), and the
/// envelope every answer has (`Answer`: `kind` and `schema`), and the
/// error object (`Error`: the envelope and the error report `error`).
fn with_envelopes(schemas: &mut Map<String, Value>, error: Value) -> Value {
    let mut all = std::mem::take(schemas);
    let envelopes = json!({
                "Answer": {
                    "type": "object",
                    "required": ["kind", "schema"],
                    "properties": {
                        "kind": {"type": "string"},
                        "schema": {"type": "integer", "const": 1},
                    },
                    "additionalProperties": true,
                },
                "Error": {
                    "allOf": [
                        {
                            "type": "object",
                            "required": ["kind", "schema"],
                            "properties": {
                                "kind": {"const": "error"},
                                "schema": {"type": "integer", "const": 1},
                            },
                        },
                        error,
                    ],
                },
    });
    if let Value::Object(envelopes) = envelopes {
        all.extend(envelopes);
    }
    Value::Object(all)
}

/// A unit ID as printed (docs/FORMAT.md §Unit ID): the game's prefix,
/// emission, block, index and an 8-character check code.
pub const UNIT_ID_PATTERN: &str =
    "^[A-Za-z]{1,8}-[0-9]{1,10}-[0-9]{1,10}-[0-9]{1,10}-[0-9A-Za-z]{8}$";

/// An idempotency key (docs/API.md §Idempotency).
const KEY_PATTERN: &str = "^[A-Za-z0-9._:-]{1,128}$";

/// Every game's slug.
fn slugs() -> Vec<&'static str> {
    ticket_issuer_core::game::Game::all()
        .map(|g| g.slug())
        .collect()
}

/// Every price a game is sold at, as the API writes euros ("0.5") and as
/// a number.
pub fn prices() -> Vec<Value> {
    let mut cents: Vec<u32> = ticket_issuer_core::game::Game::all()
        .flat_map(|g| g.prices_cents().to_vec())
        .collect();
    cents.sort_unstable();
    cents.dedup();
    let euros: Vec<String> = cents
        .iter()
        .map(|&c| ticket_issuer_core::money::Cents::from(c).to_string())
        .collect();
    euros
        .iter()
        .map(|e| json!(e))
        .chain(
            euros
                .iter()
                .filter_map(|e| e.parse::<f64>().ok())
                .map(|n| json!(n)),
        )
        .collect()
}

/// The schema of path parameter `name`.
fn path_schema(name: &str) -> Value {
    match name {
        "id" => json!({"type": "string", "pattern": UNIT_ID_PATTERN}),
        "key" => json!({"type": "string", "pattern": KEY_PATTERN}),
        "game" => json!({"type": "string", "enum": slugs()}),
        "emission" | "block" => json!({"type": "string", "pattern": "^[0-9]{1,9}$"}),
        "path" => {
            json!({"type": "string", "pattern": "^([0-9]|[1-5][0-9]|6[0-3]|entries)/(x[0-9]{3}/)*[0-9]{3}(\\.p/([1-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5]))?$"})
        }
        _ => json!({"type": "string"}),
    }
}

/// The schema of query parameter `name` (of JSON type `kind`), and
/// whether it is required.
fn query_schema(name: &str, kind: &str) -> (Value, bool) {
    match name {
        "game" => (json!({"type": "string", "enum": slugs()}), true),
        "price" => (
            json!({"type": "string", "enum": prices().into_iter().filter(Value::is_string).collect::<Vec<_>>()}),
            false,
        ),
        _ => (json!({"type": kind}), false),
    }
}

/// The Operation object of `r`.
fn operation(r: &RouteDoc, members: Option<Value>) -> Value {
    let mut parameters: Vec<Value> = path_parameters(r.path)
        .map(|name| {
            json!({"name": name, "in": "path", "required": true, "schema": path_schema(name)})
        })
        .collect();
    for (name, kind, description) in r.query {
        let (schema, required) = query_schema(name, kind);
        parameters.push(json!({
            "name": name, "in": "query", "required": required,
            "schema": schema, "description": description,
        }));
    }
    if r.idempotent {
        parameters.push(json!({
            "name": "Idempotency-Key", "in": "header", "required": false,
            "schema": {"type": "string", "pattern": "^[A-Za-z0-9._:-]{1,128}$"},
            "description": "the same key and request again answer what the first did (docs/API.md §Idempotency)",
        }));
    }
    let mut responses = Map::new();
    for (status, kind, description) in r.answers.iter().chain(r.refusals).chain(COMMON.iter()) {
        let schema = match *kind {
            "error" => json!({"$ref": "#/components/schemas/Error"}),
            "text" | "svg" | "octets" => Value::Null,
            // The description itself has no envelope.
            "openapi" => json!({"type": "object", "required": ["openapi", "paths"]}),
            // The envelope with this answer's `kind` (the `Answer` of the
            // components, its `kind` fixed: a generator merges a constant
            // with nothing else), and the members' schema.
            kind => {
                let mut all = vec![json!({
                    "type": "object",
                    "required": ["kind", "schema"],
                    "properties": {
                        "kind": {"type": "string", "const": kind},
                        "schema": {"type": "integer", "const": 1},
                    },
                })];
                all.extend(members.clone().filter(|_| *status == 200));
                json!({"allOf": all})
            }
        };
        let content = match *kind {
            "text" => json!({"text/plain": {}}),
            "svg" => json!({"image/svg+xml": {}}),
            "octets" => json!({"application/octet-stream": {}}),
            _ => json!({"application/json": {"schema": schema}}),
        };
        responses
            .entry(status.to_string())
            .or_insert_with(|| json!({"description": description, "content": content}));
    }
    let mut op = json!({
        "operationId": operation_id(r),
        "summary": r.summary,
        "parameters": parameters,
        "responses": responses,
    });
    if let Some(body) = &r.body {
        op["requestBody"] = json!({
            "required": true,
            "content": {"application/json": {"schema": body}},
        });
    }
    if r.public_health || r.public_log {
        op["security"] = json!([{"bearer": []}, {}]);
    }
    op
}

/// The names of `path`'s `{…}` parameters.
fn path_parameters(path: &str) -> impl Iterator<Item = &str> {
    path.split('/')
        .filter_map(|part| part.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| name.trim_start_matches('*'))
}

/// `get_v1_units_id`-style: unique per method and path.
fn operation_id(r: &RouteDoc) -> String {
    let path: String = r
        .path
        .replace('*', "")
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    format!(
        "{}{}",
        r.method.to_ascii_lowercase(),
        path.trim_end_matches('_')
    )
    .replace("__", "_")
}
