"""The sentiment model: cue words, features, training on the pack's turns, the cache, the
labelled-data loader and the evaluation report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hermes_desk.config import Settings
from hermes_desk.errors import ConfigError
from hermes_desk.packs import load_pack
from hermes_desk.runtime import load_sentiment_model
from hermes_desk.sentiment import (
    SentimentLexicon,
    SentimentModel,
    evaluate_sentiment,
    load_labelled,
    load_or_train_sentiment,
    sentiment_features,
    train_sentiment,
)

LEXICON = SentimentLexicon(
    negative=("失望", "不满意", "annoyed", "sue"),
    positive=("满意", "谢谢", "happy"),
    negators=("不", "not"),
    intensifiers=("很", "really"),
)


def test_cues_match_longest_first_and_flip_after_a_negator() -> None:
    assert LEXICON.hits("我很不满意").negative == 1 and LEXICON.hits("我很不满意").positive == 0
    not_happy = LEXICON.hits("i am not happy")
    assert (not_happy.negative, not_happy.positive, not_happy.negated) == (1, 0, 1)
    assert LEXICON.hits("really annoyed").intensified == 1
    assert LEXICON.hits("an issue with my order").negative == 0, "whole English words only"
    assert LEXICON.hits("谢谢 很满意").positive == 2


def test_a_lexicon_file_with_a_bad_list_is_refused_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "lexicon.yaml"
    bad.write_text("negative: [生气, 12315]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="negative must be a list of non-empty strings"):
        SentimentLexicon.from_yaml(bad)
    bad.write_text("negative: [生气]\nnegatives: [x]\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="unknown keys"):
        SentimentLexicon.from_yaml(bad)


def test_the_polarity_table_is_read_and_summed_over_character_grams(tmp_path: Path) -> None:
    table = tmp_path / "sentiment_polarity_zh.tsv"
    table.write_text("# comment\n差评\t-2.0\n好评\t1.5\n 还\t-0.5\n", encoding="utf-8")
    assert SentimentLexicon.read_polarity(table) == {"差评": -2.0, "好评": 1.5, " 还": -0.5}
    lexicon = SentimentLexicon.from_folder(tmp_path)
    assert sentiment_features("给个差评", lexicon)["x:pol_neg"] == 2.0
    assert sentiment_features("好评好评", lexicon)["x:pol_pos"] == 1.5, "each n-gram once"
    table.write_text("差评 -2.0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"sentiment_polarity_zh.tsv:1: expected"):
        SentimentLexicon.read_polarity(table)


def test_features_hold_characters_words_and_capped_cue_counts() -> None:
    feats = sentiment_features("Really annoyed!!! 失望", LEXICON)
    assert "c:失望" in feats and "w:really annoyed" in feats
    assert feats["x:neg"] == 2 and feats["x:bang"] == 1 and feats["x:only_neg"] == 1
    grams = [v for k, v in feats.items() if k[:2] in ("c:", "w:")]
    assert abs(sum(v * v for v in grams) - 1.0) < 1e-9, "n-grams are L2-normalised"
    assert sentiment_features("", LEXICON) == {}


@pytest.fixture(scope="module")
def pack_model(tmp_path_factory: pytest.TempPathFactory) -> SentimentModel:
    settings = Settings(
        service={"data_dir": tmp_path_factory.mktemp("data")},
        nlu={"model_dir": Settings().model_dir},
    )
    model = load_sentiment_model(load_pack("ecommerce"), settings)
    assert model is not None
    return model


@pytest.mark.parametrize(
    ("text", "label"),
    [
        ("我真的很生气", "negative"),
        ("really annoyed", "negative"),
        ("都一个礼拜了还没到 太慢了", "negative"),
        ("this is ridiculous, I want a manager", "negative"),
        ("好的谢谢", "positive"),
        ("thanks, that was really helpful", "positive"),
        ("订单号202405201234", "neutral"),
        ("how long does a refund take?", "neutral"),
    ],
)
def test_the_pack_model_reads_chinese_and_english_turns(
    pack_model: SentimentModel, text: str, label: str
) -> None:
    sentiment = pack_model.predict(text)
    assert sentiment.label == label
    assert -1 <= sentiment.score <= 1 and 0 < sentiment.confidence <= 1
    if label == "negative":
        assert sentiment.score < 0
    if label == "positive":
        assert sentiment.score > 0


def test_the_pack_model_scores_its_held_out_dialogues_well(pack_model: SentimentModel) -> None:
    pack = load_pack("ecommerce")
    held_out = load_labelled(pack.root / "sentiment_dev.jsonl")
    trained = {text for text, _ in load_labelled(pack.root / "sentiment.jsonl")}
    shared = trained & {text for text, _ in held_out}
    assert all(len(text.split()) <= 4 and len(text) <= 20 for text in shared), (
        f"written apart: only short stock phrases may recur, not {shared}"
    )
    report = evaluate_sentiment(pack_model, held_out)
    assert report.total == len(held_out) > 100
    assert report.accuracy >= 0.85 and report.per_class["negative"]["recall"] >= 0.75


def test_a_saved_model_loads_with_the_same_answers(
    pack_model: SentimentModel, tmp_path: Path
) -> None:
    path = tmp_path / "model.json"
    pack_model.save(path)
    again = SentimentModel.load(path)
    for text in ("我真的很生气", "ok thanks", "快递到哪了"):
        loaded, trained = again.predict(text), pack_model.predict(text)
        assert loaded.label == trained.label
        assert abs(loaded.score - trained.score) < 1e-3, "weights are saved to 6 decimals"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["features_version"] = -1
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError, match="retrain"):
        SentimentModel.load(path)


def test_training_is_cached_by_the_data_and_a_change_trains_anew(tmp_path: Path) -> None:
    pairs = [("太差了", "negative"), ("谢谢", "positive"), ("查订单", "neutral")] * 4
    first = load_or_train_sentiment(pairs, LEXICON, tmp_path)
    assert len(list(tmp_path.glob("sentiment-*.json"))) == 1
    again = load_or_train_sentiment(pairs, LEXICON, tmp_path)
    assert again.info == first.info and set(again.weights) == set(first.weights)
    for text in ("太差了", "谢谢", "查订单"):
        assert again.predict(text).label == first.predict(text).label
    load_or_train_sentiment([*pairs, ("气死了", "negative")], LEXICON, tmp_path)
    assert len(list(tmp_path.glob("sentiment-*.json"))) == 2
    assert not list(tmp_path.glob(".sentiment-*")), "no temporary file left behind"


def test_a_binary_model_reads_reviews_and_answers_by_the_scores_sign() -> None:
    pairs = [("质量很好 很满意", "positive"), ("太差了 失望", "negative")] * 5
    model = train_sentiment(pairs, LEXICON, balanced=False)
    assert model.classes == ("negative", "positive")
    assert model.predict("很满意").label == "positive"
    report = evaluate_sentiment(model, [("失望", "negative"), ("满意", "positive")], binary=True)
    assert report.accuracy == 1.0 and set(report.per_class) == {"negative", "positive"}


def test_labelled_data_in_both_shapes_and_bad_lines_named(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(
        json.dumps({"id": "d1", "turns": [{"text": "a", "sentiment": "neutral"}]})
        + "\n"
        + json.dumps({"text": "b", "label": "positive"})
        + "\n",
        encoding="utf-8",
    )
    assert load_labelled(path) == [("a", "neutral"), ("b", "positive")]
    assert load_labelled(path, limit=1) == [("a", "neutral")]
    path.write_text(json.dumps({"text": "c", "label": "angry"}) + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"data.jsonl:1: each turn needs"):
        load_labelled(path)


def test_training_needs_two_labels() -> None:
    with pytest.raises(ConfigError, match="at least two labels"):
        train_sentiment([("a", "neutral"), ("b", "neutral")], LEXICON)


def test_sentiment_is_off_when_disabled(tmp_path: Path) -> None:
    settings = Settings(service={"data_dir": tmp_path}, sentiment={"enabled": False})
    assert load_sentiment_model(load_pack("ecommerce"), settings) is None


def test_the_second_evaluation_set_is_chat_written_apart_from_training() -> None:
    pack = load_pack("ecommerce")
    held_out = load_labelled(pack.root / "sentiment_eval2.jsonl")
    labels = [label for _, label in held_out]
    english = [text for text, _ in held_out if not any("\u3400" <= c <= "\u9fff" for c in text)]
    assert len(held_out) >= 150
    assert len(english) >= 0.4 * len(held_out)
    assert labels.count("negative") >= len(held_out) / 3 and labels.count("positive") >= 15
    others = set()
    for name in ("sentiment.jsonl", "sentiment_dev.jsonl", "sentiment_eval.jsonl"):
        others |= {text for text, _ in load_labelled(pack.root / name)}
    shared = others & {text for text, _ in held_out}
    assert all(len(text.split()) <= 4 and len(text) <= 20 for text in shared), (
        f"written apart: only short stock phrases may recur, not {shared}"
    )


def test_the_sentiment_bench_scores_every_held_out_set(pack_model: SentimentModel) -> None:
    from hermes_desk.bench.sentiment import HELD_OUT, _pack_figures

    figures = _pack_figures(pack_model, rounds=1)
    pack = load_pack("ecommerce")
    for name in HELD_OUT:
        total = len(load_labelled(pack.root / f"sentiment_{name}.jsonl"))
        assert figures[name]["total"] == total > 100, name
        assert figures[f"{name}_zh"]["total"] + figures[f"{name}_en"]["total"] == total
        assert 0 <= figures[name]["per_class"]["negative"]["recall"] <= 1
    assert figures["latency_chat_turns"]["calls"] == sum(
        figures[name]["total"] for name in HELD_OUT
    )
