use serde_json::json;

use super::*;

fn model(schema: Value) -> Result<Model, Error> {
    Model::read(&[("s.json".to_string(), schema)])
}

fn error(schema: Value) -> String {
    match model(schema) {
        Ok(model) => panic!("read: {model:?}"),
        Err(Error(message)) => message,
    }
}

fn object(properties: Value, required: Value) -> Value {
    json!({ "title": "Thing", "type": "object", "properties": properties, "required": required, "additionalProperties": false })
}

#[test]
fn an_object_with_optional_keys_is_an_interface_and_two_python_classes() {
    let m = model(object(
        json!({
            "id": { "description": "Its id.", "type": "string" },
            "count": { "type": ["integer", "null"] },
            "tags": { "type": "array", "items": { "enum": ["a", "b"] } },
            "note": { "type": "string" }
        }),
        json!(["id", "count", "tags"]),
    ))
    .unwrap();
    let ts = m.typescript();
    assert!(ts.contains("export interface Thing {\n  /** Its id. */\n  id: string;\n  count: number | null;\n  tags: ('a' | 'b')[];\n  note?: string;\n}\n"), "{ts}");
    let py = m.python().unwrap();
    assert!(py.contains("from typing import List, Literal, Optional, TypedDict\n"), "{py}");
    assert!(py.contains("class _ThingRequired(TypedDict):\n    #: Its id.\n    id: str\n    count: Optional[int]\n    tags: List[Literal[\"a\", \"b\"]]\n\n\nclass Thing(_ThingRequired, total=False):\n    note: str\n"), "{py}");
}

#[test]
fn refs_unions_and_maps_name_their_types_and_come_after_what_they_use() {
    let m = model(json!({
        "title": "Root",
        "type": "object",
        "properties": {
            "either": { "description": "A or B.", "anyOf": [{ "$ref": "#/$defs/A" }, { "$ref": "#/$defs/B" }, { "type": "null" }] },
            "byId": { "type": "object", "additionalProperties": { "$ref": "#/$defs/A" } },
            "anything": { "description": "Any JSON." },
            "config": { "type": "object" },
            "flag": { "const": true },
            "inline": { "title": "inner part", "type": "object", "properties": { "x": { "type": "number" } }, "required": ["x"], "additionalProperties": false }
        },
        "required": ["either", "byId", "anything", "config", "flag", "inline"],
        "additionalProperties": false,
        "$defs": {
            "A": { "title": "A", "type": "object", "properties": { "a": { "type": "string" } }, "required": ["a"], "additionalProperties": false },
            "B": { "enum": ["x", "y"] }
        }
    }))
    .unwrap();
    let names: Vec<&str> = m.ordered().unwrap().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["InnerPart", "A", "B", "Root"]);
    let ts = m.typescript();
    assert!(ts.contains("  either: A | B | null;\n  byId: { [key: string]: A };\n  /** Any JSON. */\n  anything: Json;\n  config: JsonObject;\n  flag: true;\n  inline: InnerPart;\n"), "{ts}");
    let py = m.python().unwrap();
    assert!(py.contains("    either: Optional[Union[A, B]]\n    byId: Dict[str, A]\n    #: Any JSON.\n    anything: Any\n    config: Dict[str, Any]\n    flag: Literal[True]\n"), "{py}");
    assert!(py.contains("B = Literal[\"x\", \"y\"]\n"), "{py}");
}

#[test]
fn a_key_that_is_no_python_name_takes_the_functional_syntax() {
    let m = model(object(json!({ "from": { "type": "string" }, "to": { "type": "string" } }), json!(["from", "to"])))
        .unwrap();
    let py = m.python().unwrap();
    assert!(
        py.contains(
            "Thing = TypedDict(\n    \"Thing\",\n    {\n        \"from\": str,\n        \"to\": str,\n    },\n)\n"
        ),
        "{py}"
    );
}

#[test]
fn extra_keys_of_one_type_are_an_index_signature_and_a_python_dict() {
    let m = model(json!({
        "title": "Flags", "type": "object",
        "properties": { "on": { "type": "boolean" } }, "required": ["on"],
        "additionalProperties": { "type": "boolean" }
    }))
    .unwrap();
    assert!(m.typescript().contains("export interface Flags {\n  on: boolean;\n  [key: string]: boolean;\n}\n"));
    assert!(m.python().unwrap().contains("#: Keys: on.\nFlags = Dict[str, bool]\n"));
    let mixed = model(json!({
        "title": "Flags", "type": "object",
        "properties": { "on": { "type": "string" } }, "required": ["on"],
        "additionalProperties": { "type": "boolean" }
    }))
    .unwrap();
    assert!(mixed.python().unwrap_err().0.contains("Python's TypedDict cannot say that"));
}

#[test]
fn a_feature_it_does_not_handle_is_an_error_naming_where() {
    let cases = [
        (json!({ "title": "T", "allOf": [] }), "s.json#: the keyword `allOf` is not supported"),
        (
            object(json!({ "a": { "type": "string", "patternProperties": {} } }), json!([])),
            "s.json#/properties/a: the keyword `patternProperties` is not supported",
        ),
        (
            json!({ "title": "T", "type": "object", "properties": {} }),
            "s.json#: an object that lists properties must say what else it holds",
        ),
        (
            object(json!({ "a": { "$ref": "#/$defs/Nope" } }), json!([])),
            "`$ref` \"#/$defs/Nope\" is not `#/$defs/NAME` of this schema",
        ),
        (object(json!({ "a": { "$ref": "other.json#/$defs/A" } }), json!([])), "is not `#/$defs/NAME` of this schema"),
        (object(json!({ "a": { "type": "array" } }), json!([])), "s.json#/properties/a: an array without `items`"),
        (
            object(json!({ "a": { "type": ["object", "null"] } }), json!([])),
            "`object` in a list of types is not supported",
        ),
        (
            object(json!({ "a": { "type": "object", "properties": {}, "additionalProperties": false } }), json!([])),
            "s.json#/properties/a: an object that lists properties needs a `title`",
        ),
        (object(json!({ "a": { "enum": [[1]] } }), json!([])), "is not a scalar"),
        (
            object(json!({ "a": { "type": "string" } }), json!(["b"])),
            "`required` names \"b\", which `properties` does not list",
        ),
        (object(json!({ "a": { "type": "string", "items": {} } }), json!([])), "`items` on a schema of type `string`"),
        (object(json!({ "a": { "items": {} } }), json!([])), "`items` without a `type`"),
        (object(json!({ "a": false }), json!([])), "the schema `false`"),
        (json!({ "type": "string" }), "s.json: the root has no `title`"),
    ];
    for (schema, expected) in cases {
        let message = error(schema.clone());
        assert!(message.contains(expected), "{schema}: {message}");
    }
}

#[test]
fn one_name_has_one_definition_and_no_type_refers_to_itself() {
    let a = |t: &str| json!({ "title": "A", "type": "object", "properties": { "a": { "type": t } }, "required": ["a"], "additionalProperties": false });
    let root =
        |def: Value| json!({ "title": "R", "type": "array", "items": { "$ref": "#/$defs/A" }, "$defs": { "A": def } });
    // The same definition in two schemas is one type.
    let same = Model::read(&[("one.json".into(), root(a("string"))), ("two.json".into(), root(a("string")))]);
    assert_eq!(same.unwrap().types.iter().filter(|t| t.name == "A").count(), 1);
    let differing = Model::read(&[("one.json".into(), root(a("string"))), ("two.json".into(), root(a("number")))]);
    let message = differing.unwrap_err().0;
    assert!(
        message.contains("two.json#/$defs/A: the type `A` is also defined at one.json#/$defs/A, differently"),
        "{message}"
    );

    let recursive = model(json!({
        "title": "Forest", "type": "object",
        "properties": { "trees": { "type": "array", "items": { "$ref": "#/$defs/Tree" } } },
        "additionalProperties": false,
        "$defs": { "Tree": { "type": "array", "items": { "$ref": "#/$defs/Tree" } } }
    }))
    .unwrap();
    assert!(recursive.python().unwrap_err().0.contains("recursive types are not supported"));
}

#[test]
fn the_shipped_schemas_generate_the_same_text_every_time() {
    let first = generate().unwrap();
    assert_eq!(first, generate().unwrap());
    assert_eq!(first.iter().map(|f| f.path).collect::<Vec<_>>(), [TYPESCRIPT, PYTHON]);
}
