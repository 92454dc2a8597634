"""Tokens are stored hashed; modify compatibility reasons (pure Python)."""
import pytest

from headrace.instance.compat import ModifyRefused, check_resume, incompatibilities
from headrace.instance.tokens import Tokens
from headrace.spec import parse_pipeline


def test_generated_tokens_are_stored_hashed_and_checked(tmp_path):
    t, new = Tokens.load(tmp_path, env={})
    assert set(new) == {"admin", "reader"}
    text = (tmp_path / "instance" / "tokens.json").read_text()
    assert new["admin"] not in text and new["reader"] not in text
    assert t.role(new["admin"]) == "admin" and t.role(new["reader"]) == "reader"
    assert t.role("wrong") is None and t.role(None) is None
    t2, new2 = Tokens.load(tmp_path, env={})          # second start: nothing new, same tokens work
    assert new2 == {} and t2.role(new["reader"]) == "reader"


def test_env_tokens_win(tmp_path):
    t, new = Tokens.load(tmp_path, env={"HEADRACE_ADMIN_TOKEN": "a" * 20, "HEADRACE_READER_TOKEN": "r" * 20})
    assert new == {} and t.role("a" * 20) == "admin" and t.role("r" * 20) == "reader"


def _p(window=None, add=None, source="s", group=None):
    w = window or {"$tumblingWindow": {"interval": {"size": 10, "unit": "second"},
                                       "pipeline": [{"$group": group or {"_id": "$k", "n": {"$sum": 1}}}]}}
    stages = [{"$source": {"connectionName": "stream", "stream": source}}]
    if add:
        stages.append({"$addFields": add})
    stages += [w, {"$merge": {"into": {"connectionName": "store", "db": "d", "coll": "c"}}}]
    return parse_pipeline(stages)


def test_stateless_change_is_accepted():
    check_resume(_p(), _p(add={"x": 1}))
    assert incompatibilities(_p(add={"x": 1}), _p(add={"x": 2})) == []


def test_window_source_and_group_changes_are_refused_with_reasons():
    hop = {"$hoppingWindow": {"interval": {"size": 10, "unit": "second"}, "hopSize": {"size": 5, "unit": "second"},
                              "pipeline": [{"$group": {"_id": "$k", "n": {"$sum": 1}}}]}}
    with pytest.raises(ModifyRefused) as ei:
        check_resume(_p(), _p(window=hop))
    assert ei.value.code == "MODIFY_INCOMPATIBLE"
    assert [r["code"] for r in ei.value.reasons] == ["WINDOW_CHANGED"]
    longer = {"$tumblingWindow": {"interval": {"size": 20, "unit": "second"},
                                  "pipeline": [{"$group": {"_id": "$j", "n": {"$sum": 2}}}]}}
    codes = [r["code"] for r in incompatibilities(_p(), _p(window=longer, source="other"))]
    assert codes == ["SOURCE_CHANGED", "WINDOW_CHANGED", "GROUP_KEY_CHANGED", "ACCUMULATORS_CHANGED"]
