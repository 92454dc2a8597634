"""headrace.mql.query.validate_query and headrace.mql.jsonschema.validate_schema: codes,
paths, expected vs found."""
from __future__ import annotations

import pytest

from headrace.errors import PipelineError
from headrace.mql.jsonschema import validate_schema
from headrace.mql.query import validate_query


def rx(pattern, options=""):
    return {"$regularExpression": {"pattern": pattern, "options": options}}


@pytest.mark.parametrize("query", [
    {},
    {"status": "A", "qty": {"$lt": 30}},
    {"$or": [{"status": "A"}, {"qty": {"$lt": 30}}], "item": rx("^p")},
    {"$and": [{"a": 1}], "$nor": [{"b": {"$exists": True}}], "$comment": "why"},
    {"a": {"$eq": {"$gt": 1}}},  # a literal document
    {"a": {"b": {"$gt": 1}}},  # a literal document too
    {"a": {"$in": [1, "x", None, rx("^a", "i")], "$nin": []}},
    {"a": {"$type": ["string", 16, 1.0, "number"]}},
    {"a": {"$regex": "^a.c$", "$options": "imsxu"}},
    {"a": {"$options": "i", "$regex": "x"}},
    {"a": {"$regex": rx("a", "i")}},
    {"a": {"$size": 0}, "b": {"$size": 2.0}},
    {"a": {"$mod": [4, 0]}, "b": {"$mod": [4.5, -1.5]}},
    {"a": {"$bitsAllSet": 50}, "b": {"$bitsAnySet": [1, 5]}, "c": {"$bitsAllClear": b"0"}, "d": {"$bitsAnyClear": []}},
    {"a": {"$all": [1, rx("x")]}, "b": {"$all": [{"$elemMatch": {"x": 1}}, {"$elemMatch": {"$gt": 1}}]}},
    {"a": {"$elemMatch": {"$gte": 80, "$lt": 85}}},
    {"a": {"$elemMatch": {"b": 1, "$or": [{"c": 1}, {"d": {"$ne": 2}}]}}},
    {"a": {"$not": {"$gt": 1.99}}, "b": {"$not": rx("^p")}},
    {"r": {"$ref": "coll", "$id": 1}},
    {"$jsonSchema": {"required": ["a"], "properties": {"a": {"bsonType": ["int", "long"]}}}},
])
def test_valid_queries(query):
    validate_query(query, "$match")


def err(query, path="$match"):
    with pytest.raises(PipelineError) as e:
        validate_query(query, path)
    return e.value


@pytest.mark.parametrize("query, code, path", [
    ({"a": {"$foo": 1}}, "QUERY_UNKNOWN_OPERATOR", "$match.a.$foo"),
    ({"$foo": 1}, "QUERY_UNKNOWN_OPERATOR", "$match.$foo"),
    ({"$gt": 1}, "QUERY_UNKNOWN_OPERATOR", "$match.$gt"),
    ({"a": {"$gt": 1, "b": 2}}, "QUERY_UNKNOWN_OPERATOR", "$match.a.b"),
    ({"a": {"$and": [{"b": 1}]}}, "QUERY_UNKNOWN_OPERATOR", "$match.a.$and"),
    ({"$text": {"$search": "coffee"}}, "QUERY_NOT_SUPPORTED_YET", "$match.$text"),
    ({"$where": "this.a > 1"}, "QUERY_NOT_SUPPORTED_YET", "$match.$where"),
    ({"loc": {"$near": [0, 0]}}, "QUERY_NOT_SUPPORTED_YET", "$match.loc.$near"),
    ({"loc": {"$geoWithin": {"$center": [[0, 0], 1]}}}, "QUERY_NOT_SUPPORTED_YET", "$match.loc.$geoWithin"),
    ({"a": {"$bitsAllSet": -1}}, "QUERY_BAD_ARGS", "$match.a.$bitsAllSet"),
    ({"a": {"$bitsAllSet": 2.5}}, "QUERY_BAD_ARGS", "$match.a.$bitsAllSet"),
    ({"a": {"$bitsAnySet": "3"}}, "QUERY_BAD_ARGS", "$match.a.$bitsAnySet"),
    ({"$or": [{"a": {"$bitsAnyClear": [1, -2]}}]}, "QUERY_BAD_ARGS", "$match.$or.0.a.$bitsAnyClear.1"),
    ({"a": {"$bitsAllClear": [0.5]}}, "QUERY_BAD_ARGS", "$match.a.$bitsAllClear.0"),
    ({"$and": {"a": 1}}, "QUERY_BAD_ARGS", "$match.$and"),
    ({"$or": []}, "QUERY_BAD_ARGS", "$match.$or"),
    ({"$nor": [1]}, "QUERY_BAD_ARGS", "$match.$nor.0"),
    ({"a": {"$in": 5}}, "QUERY_BAD_ARGS", "$match.a.$in"),
    ({"a": {"$nin": {"x": 1}}}, "QUERY_BAD_ARGS", "$match.a.$nin"),
    ({"a": {"$in": [{"$gt": 1}]}}, "QUERY_BAD_ARGS", "$match.a.$in.0"),
    ({"a": {"$size": -1}}, "QUERY_BAD_ARGS", "$match.a.$size"),
    ({"a": {"$size": 1.5}}, "QUERY_BAD_ARGS", "$match.a.$size"),
    ({"a": {"$size": "2"}}, "QUERY_BAD_ARGS", "$match.a.$size"),
    ({"a": {"$mod": 4}}, "QUERY_BAD_ARGS", "$match.a.$mod"),
    ({"a": {"$mod": [4]}}, "QUERY_BAD_ARGS", "$match.a.$mod"),
    ({"a": {"$mod": [4, 1, 2]}}, "QUERY_BAD_ARGS", "$match.a.$mod"),
    ({"a": {"$mod": [0, 1]}}, "QUERY_BAD_ARGS", "$match.a.$mod.0"),
    ({"a": {"$mod": [0.5, 1]}}, "QUERY_BAD_ARGS", "$match.a.$mod.0"),
    ({"a": {"$mod": ["2", 1]}}, "QUERY_BAD_ARGS", "$match.a.$mod.0"),
    ({"a": {"$mod": [2, float("nan")]}}, "QUERY_BAD_ARGS", "$match.a.$mod.1"),
    ({"a": {"$regex": "a(b"}}, "QUERY_BAD_ARGS", "$match.a.$regex"),
    ({"a": {"$regex": "[a-"}}, "QUERY_BAD_ARGS", "$match.a.$regex"),
    ({"a": {"$regex": 5}}, "QUERY_BAD_ARGS", "$match.a.$regex"),
    ({"a": {"$regex": "a", "$options": "z"}}, "QUERY_BAD_ARGS", "$match.a.$regex"),
    ({"a": {"$options": "i"}}, "QUERY_BAD_ARGS", "$match.a.$options"),
    ({"a": {"$regex": rx("a", "i"), "$options": "m"}}, "QUERY_BAD_ARGS", "$match.a.$regex"),
    ({"a": rx("(")}, "QUERY_BAD_ARGS", "$match.a"),
    ({"a": {"$in": [rx("(")]}}, "QUERY_BAD_ARGS", "$match.a.$in.0"),
    ({"a": {"$gt": rx("a")}}, "QUERY_BAD_ARGS", "$match.a.$gt"),
    ({"a": {"$ne": rx("a")}}, "QUERY_BAD_ARGS", "$match.a.$ne"),
    ({"a": {"$type": "str"}}, "QUERY_BAD_ARGS", "$match.a.$type"),
    ({"a": {"$type": 99}}, "QUERY_BAD_ARGS", "$match.a.$type"),
    ({"a": {"$type": []}}, "QUERY_BAD_ARGS", "$match.a.$type"),
    ({"a": {"$type": True}}, "QUERY_BAD_ARGS", "$match.a.$type"),
    ({"a": {"$all": 1}}, "QUERY_BAD_ARGS", "$match.a.$all"),
    ({"a": {"$all": [{"$elemMatch": {"b": 1}}, 5]}}, "QUERY_BAD_ARGS", "$match.a.$all.1"),
    ({"a": {"$all": [{"$gt": 1}]}}, "QUERY_BAD_ARGS", "$match.a.$all.0"),
    ({"a": {"$elemMatch": [1]}}, "QUERY_BAD_ARGS", "$match.a.$elemMatch"),
    ({"a": {"$elemMatch": {"$gt": 1, "$foo": 2}}}, "QUERY_UNKNOWN_OPERATOR", "$match.a.$elemMatch.$foo"),
    ({"a": {"$elemMatch": {"b": {"$in": 3}}}}, "QUERY_BAD_ARGS", "$match.a.$elemMatch.b.$in"),
    ({"a": {"$elemMatch": {"$expr": {"$eq": [1, 1]}}}}, "QUERY_BAD_ARGS", "$match.a.$elemMatch.$expr"),
    ({"a": {"$not": 5}}, "QUERY_BAD_ARGS", "$match.a.$not"),
    ({"a": {"$not": {}}}, "QUERY_BAD_ARGS", "$match.a.$not"),
    ({"a": {"$not": {"b": 1}}}, "QUERY_UNKNOWN_OPERATOR", "$match.a.$not.b"),
    ({"a": {"$not": {"$size": -2}}}, "QUERY_BAD_ARGS", "$match.a.$not.$size"),
    ({"$jsonSchema": 5}, "QUERY_BAD_ARGS", "$match.$jsonSchema"),
    ({"a": {"$elemMatch": {"$jsonSchema": {}}}}, "QUERY_NOT_SUPPORTED_YET", "$match.a.$elemMatch.$jsonSchema"),
])
def test_invalid_queries(query, code, path):
    e = err(query)
    assert e.code == code, str(e)
    assert e.where.path == path, str(e)


def test_messages_say_expected_and_found():
    e = err({"age": {"$in": 5}})
    assert e.expected == "an array" and e.found == 5
    assert "expected an array, found 5" in str(e) and "$match.age.$in" in str(e)
    e = err({"age": {"$size": -1}})
    assert e.expected == "a non-negative integer" and e.found == -1
    e = err({"a": {"$mod": [4]}})
    assert "[divisor, remainder]" in e.expected and e.found == [4]
    e = err({"a": {"$regex": "a(b"}})
    assert "regular expression" in e.expected and e.found == "a(b"
    e = err({"a": {"$text": 1}}, path="")
    assert e.where.path == "a.$text" and e.code == "QUERY_UNKNOWN_OPERATOR"
    assert err({"$where": "1"}).code == "QUERY_NOT_SUPPORTED_YET"
    assert "not supported yet" in str(err({"$where": "1"}))


def test_expr_is_validated_as_an_expression():
    validate_query({"$expr": {"$gt": ["$spent", "$budget"]}}, "$match")
    e = err({"$or": [{"$expr": {"$foo": [1]}}]})
    assert e.code.startswith("EXPR_") and e.where.path.startswith("$match.$or.0.$expr")


def test_not_a_document():
    e = err([{"a": 1}], path="validator")
    assert e.code == "QUERY_BAD_ARGS" and e.where.path == "validator"


# --------------------------------------------------------------------- $jsonSchema


@pytest.mark.parametrize("schema", [
    {},
    {"bsonType": "object", "title": "t", "description": "d", "required": ["a"],
     "properties": {"a": {"bsonType": ["int", "long"], "minimum": 0, "exclusiveMinimum": True,
                          "maximum": 10, "multipleOf": 2}},
     "additionalProperties": {"bsonType": "string"}, "patternProperties": {"^x": {"type": "number"}},
     "minProperties": 1, "maxProperties": 5.0, "dependencies": {"a": ["b"], "b": {"required": ["c"]}}},
    {"properties": {"s": {"type": "string", "minLength": 1, "maxLength": 3, "pattern": "^[a-z]+$"},
                    "l": {"type": "array", "items": {"enum": [1, 2]}, "minItems": 0, "maxItems": 2,
                          "uniqueItems": True},
                    "t": {"items": [{"type": "string"}], "additionalItems": False},
                    "o": {"anyOf": [{"type": "null"}, {"type": "object"}], "allOf": [{}],
                          "oneOf": [{}, {"not": {}}], "not": {"type": "boolean"}}}},
])
def test_valid_schemas(schema):
    validate_schema(schema, "$jsonSchema")
    validate_query({"$jsonSchema": schema}, "validator")


@pytest.mark.parametrize("schema, code, path", [
    ({"$ref": "#/definitions/x"}, "QUERY_NOT_SUPPORTED_YET", "$jsonSchema.$ref"),
    ({"properties": {"a": {"format": "email"}}}, "QUERY_NOT_SUPPORTED_YET", "$jsonSchema.properties.a.format"),
    ({"definitions": {}}, "QUERY_NOT_SUPPORTED_YET", "$jsonSchema.definitions"),
    ({"default": 1}, "QUERY_NOT_SUPPORTED_YET", "$jsonSchema.default"),
    ({"$schema": "x"}, "QUERY_NOT_SUPPORTED_YET", "$jsonSchema.$schema"),
    ({"id": "x"}, "QUERY_NOT_SUPPORTED_YET", "$jsonSchema.id"),
    ({"type": "integer"}, "QUERY_NOT_SUPPORTED_YET", "$jsonSchema.type"),
    ({"properties": {"a": {"type": ["string", "integer"]}}}, "QUERY_NOT_SUPPORTED_YET",
     "$jsonSchema.properties.a.type"),
    ({"encrypt": {}}, "QUERY_NOT_SUPPORTED_YET", "$jsonSchema.encrypt"),
    ({"foo": 1}, "QUERY_UNKNOWN_OPERATOR", "$jsonSchema.foo"),
    ({"const": 1}, "QUERY_UNKNOWN_OPERATOR", "$jsonSchema.const"),
    ({"type": "object", "bsonType": "object"}, "QUERY_BAD_ARGS", "$jsonSchema"),
    ({"bsonType": "strin"}, "QUERY_BAD_ARGS", "$jsonSchema.bsonType"),
    ({"type": "int"}, "QUERY_BAD_ARGS", "$jsonSchema.type"),
    ({"type": []}, "QUERY_BAD_ARGS", "$jsonSchema.type"),
    ({"bsonType": ["int", "int"]}, "QUERY_BAD_ARGS", "$jsonSchema.bsonType"),
    ({"required": []}, "QUERY_BAD_ARGS", "$jsonSchema.required"),
    ({"required": ["a", "a"]}, "QUERY_BAD_ARGS", "$jsonSchema.required"),
    ({"required": "a"}, "QUERY_BAD_ARGS", "$jsonSchema.required"),
    ({"properties": []}, "QUERY_BAD_ARGS", "$jsonSchema.properties"),
    ({"properties": {"a": 1}}, "QUERY_BAD_ARGS", "$jsonSchema.properties.a"),
    ({"minimum": "1"}, "QUERY_BAD_ARGS", "$jsonSchema.minimum"),
    ({"exclusiveMinimum": True}, "QUERY_BAD_ARGS", "$jsonSchema.exclusiveMinimum"),
    ({"maximum": 1, "exclusiveMaximum": 1}, "QUERY_BAD_ARGS", "$jsonSchema.exclusiveMaximum"),
    ({"minLength": -1}, "QUERY_BAD_ARGS", "$jsonSchema.minLength"),
    ({"maxItems": 1.5}, "QUERY_BAD_ARGS", "$jsonSchema.maxItems"),
    ({"multipleOf": 0}, "QUERY_BAD_ARGS", "$jsonSchema.multipleOf"),
    ({"pattern": "("}, "QUERY_BAD_ARGS", "$jsonSchema.pattern"),
    ({"patternProperties": {"(": {}}}, "QUERY_BAD_ARGS", "$jsonSchema.patternProperties.("),
    ({"enum": []}, "QUERY_BAD_ARGS", "$jsonSchema.enum"),
    ({"enum": [1, 1.0]}, "QUERY_BAD_ARGS", "$jsonSchema.enum"),
    ({"items": 1}, "QUERY_BAD_ARGS", "$jsonSchema.items"),
    ({"items": [{}, 2]}, "QUERY_BAD_ARGS", "$jsonSchema.items.1"),
    ({"additionalProperties": "no"}, "QUERY_BAD_ARGS", "$jsonSchema.additionalProperties"),
    ({"uniqueItems": 1}, "QUERY_BAD_ARGS", "$jsonSchema.uniqueItems"),
    ({"anyOf": []}, "QUERY_BAD_ARGS", "$jsonSchema.anyOf"),
    ({"allOf": [{}, 3]}, "QUERY_BAD_ARGS", "$jsonSchema.allOf.1"),
    ({"not": []}, "QUERY_BAD_ARGS", "$jsonSchema.not"),
    ({"dependencies": {"a": "b"}}, "QUERY_BAD_ARGS", "$jsonSchema.dependencies.a"),
    ({"dependencies": {"a": []}}, "QUERY_BAD_ARGS", "$jsonSchema.dependencies.a"),
    ({"description": 5}, "QUERY_BAD_ARGS", "$jsonSchema.description"),
    ({"items": {"properties": {"x": {"bsonType": "nope"}}}}, "QUERY_BAD_ARGS",
     "$jsonSchema.items.properties.x.bsonType"),
])
def test_invalid_schemas(schema, code, path):
    with pytest.raises(PipelineError) as e:
        validate_query({"$jsonSchema": schema}, "")
    assert e.value.code == code, str(e.value)
    assert e.value.where.path == path, str(e.value)
