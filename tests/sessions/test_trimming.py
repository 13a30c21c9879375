"""Trimming invariants: budget, order, tool pairs, the article's rules, facts that survive."""

from __future__ import annotations

import random
import sys

import pytest

from hermes_desk.config import SessionSettings
from hermes_desk.sessions import (
    ContextTrimmer,
    EstimateCounter,
    TrimWeights,
    Turn,
    build_token_counter,
    build_trimmer,
    trimming,
)
from hermes_desk.sessions.tokens import MESSAGE_OVERHEAD_TOKENS


@pytest.fixture(scope="module")
def trimmer() -> ContextTrimmer:
    return build_trimmer(SessionSettings())


FILLER = [
    Turn("agent", "好的，请您稍等，我这边帮您查询一下相关的信息。"),
    Turn("user", "嗯嗯，好的，谢谢你啊。"),
    Turn("agent", "不客气，这是我们应该做的，还有什么可以帮您的吗？"),
    Turn("user", "好的好的，我知道了，谢谢。"),
]


def _random_history(rng: random.Random, n: int) -> list[Turn]:
    texts = [
        "我的订单123456789012还没有发货",
        "请问有什么可以帮您",
        "物流已经晚了7天了",
        "好的谢谢",
        "我想退货，不要换货",
        "那个快递昨天到了吗",
        "The parcel from Shenzhen is late",
        "帮我查一下退款进度",
    ]
    turns: list[Turn] = []
    call = 0
    while len(turns) < n:
        if rng.random() < 0.2:
            call += 1
            turns.append(Turn("agent", "查询订单", tool_call_id=f"c{call}", name="order_status"))
            if rng.random() < 0.5:  # sometimes the result comes after another utterance
                turns.append(Turn("user", rng.choice(texts)))
            turns.append(Turn("tool", '{"status": "shipped", "days": 3}', tool_call_id=f"c{call}"))
        else:
            turns.append(Turn(rng.choice(["user", "agent"]), rng.choice(texts)))
    return turns


def test_everything_is_kept_when_it_fits(trimmer: ContextTrimmer) -> None:
    turns = FILLER[:2]
    result = trimmer.trim(turns, "你好", budget_tokens=10_000)
    assert result.turns == turns
    assert result.tokens_before == result.tokens_after == trimmer.count_tokens(turns)
    assert result.saving == 0


@pytest.mark.parametrize("seed", range(30))
def test_invariants_on_random_histories(trimmer: ContextTrimmer, seed: int) -> None:
    rng = random.Random(seed)
    turns = _random_history(rng, rng.randint(3, 30))
    total = trimmer.count_tokens(turns)
    budget = rng.randint(1, total)
    result = trimmer.trim(turns, rng.choice(["退款呢", "它到哪了", "the parcel?"]), budget)

    assert result.tokens_before == total
    assert result.tokens_after == trimmer.count_tokens(result.turns) <= budget
    assert result.kept_indices == sorted(result.kept_indices)  # chronological
    assert result.turns == [turns[i] for i in result.kept_indices]
    kept_calls = [t.tool_call_id for t in result.turns if t.tool_call_id]
    for call in set(kept_calls):  # a call never travels without its result, nor the reverse
        assert kept_calls.count(call) == sum(1 for t in turns if t.tool_call_id == call)
    # Recency fill: no dropped turn would still have fitted... unless it is half of a tool pair.
    room = budget - result.tokens_after
    for i, turn in enumerate(turns):
        if i not in result.kept_indices and turn.tool_call_id is None:
            assert trimmer.count_tokens([turn]) > room


def test_keyword_overlap_rule_keeps_the_relevant_turn(trimmer: ContextTrimmer) -> None:
    relevant = Turn("user", "我上个月买的空气净化器滤网有异味")
    turns = [relevant, *FILLER * 3]
    budget = trimmer.count_tokens([relevant, FILLER[-1]]) + 2
    result = trimmer.trim(turns, "空气净化器滤网能换吗", budget)
    assert relevant in result.turns
    assert result.reasons[0] == "overlap"


def test_anchor_query_keeps_the_turn_it_points_at(trimmer: ContextTrimmer) -> None:
    offer = Turn("agent", "为您推荐讲礼驴肉馆，人均消费68元。")
    turns = [*FILLER, offer]
    budget = trimmer.count_tokens([offer]) + 1
    result = trimmer.trim(turns, "这家店的地址在哪？", budget)
    assert result.turns == [offer]
    assert result.reasons[len(turns) - 1] == "query-anchor"


def test_anchor_turns_come_with_their_neighbours(trimmer: ContextTrimmer) -> None:
    before = Turn("agent", "您的包裹由顺丰配送")
    anchor = Turn("user", "不要改地址，昨天已经说过了")
    after = Turn("agent", "明白，不会修改")
    turns = [*FILLER, before, anchor, after, *FILLER]
    budget = trimmer.count_tokens([before, anchor, after, FILLER[-1]]) + 2
    result = trimmer.trim(turns, "好的", budget)
    assert {4, 5, 6} <= set(result.kept_indices)
    assert result.reasons[5] == "anchor" and result.reasons[4] == "neighbour"


def test_the_turn_that_states_a_fact_survives_over_chit_chat(trimmer: ContextTrimmer) -> None:
    fact = Turn("user", "你好，帮我找一家人均消费100-150元的川菜馆，要有包间")
    turns = [fact, *FILLER * 4]
    budget = trimmer.count_tokens(turns) // 2
    result = trimmer.trim(turns, "地址是什么？", budget)
    assert fact in result.turns
    assert result.tokens_after <= budget


def test_baselines_behave_as_named(trimmer: ContextTrimmer) -> None:
    counter = build_token_counter("gpt-4o-mini")
    recency = ContextTrimmer(counter, weights=TrimWeights.recency_only())
    fact = Turn("user", "帮我找一家人均消费100-150元的川菜馆")
    turns = [fact, *FILLER * 3]
    budget = trimmer.count_tokens(turns[-3:])
    assert recency.trim(turns, "地址呢", budget).turns == turns[-3:]
    assert fact in trimmer.trim(turns, "地址呢", budget).turns


def test_counts_match_the_model_tokenizer() -> None:
    tiktoken = pytest.importorskip("tiktoken")
    counter = build_token_counter("openai/gpt-4o-mini")
    assert counter.name == "o200k_base"
    encoding = tiktoken.get_encoding("o200k_base")  # already loaded: no download
    for text in ["你好，我想找家人均消费在100-150元的餐馆", "Where is my parcel?", ""]:
        assert counter.count(text) == len(encoding.encode_ordinary(text))
    trimmer = ContextTrimmer(counter)
    turns = [Turn("user", "你好"), Turn("agent", "您好，有什么可以帮您？")]
    expected = sum(len(encoding.encode_ordinary(t.text)) + MESSAGE_OVERHEAD_TOKENS for t in turns)
    assert trimmer.count_tokens(turns) == expected
    assert build_token_counter("gpt-4").name == "cl100k_base"


def test_estimate_is_close_for_chinese_and_english() -> None:
    counter = build_token_counter("gpt-4o-mini")
    estimate = EstimateCounter()
    text = "你好，我想找家人均消费在100-150元的餐馆吃驴杂汤这道菜，请给我推荐一家餐馆用餐吧。" * 3
    assert abs(estimate.count(text) - counter.count(text)) / counter.count(text) < 0.15
    assert estimate.count("") == 0


FACT_TEXTS = [
    "帮我找一家人均消费100-150元的川菜馆，评分4.5分以上",
    "电话是010-63553377，地址在北京市东城区",
    "好的，为您推荐全聚德烤鸭店，人均消费200-300元。",
    "The parcel from L.A is late, I don't want it",
    "不要辣的，游玩时间3小时 - 4小时的景点",
    "嗯嗯，好的，谢谢你啊。",
]


def _fact_history(rng: random.Random, n: int) -> list[Turn]:
    return [
        Turn(rng.choice(["user", "agent"]), rng.choice(FACT_TEXTS + [f.text for f in FILLER]))
        for _ in range(n)
    ]


def _trims(trimmer: ContextTrimmer, seed: int) -> list[tuple[list[int], dict[int, str]]]:
    rng = random.Random(seed)
    out = []
    for _ in range(12):
        turns = _fact_history(rng, rng.randint(4, 30))
        budget = rng.randint(1, trimmer.count_tokens(turns))
        result = trimmer.trim(
            turns, rng.choice(["那家店的电话呢", "评分4.5分以上的", "it"]), budget
        )
        out.append((result.kept_indices, result.reasons))
    return out


def test_pure_python_segmentation_fallback_trims_the_same(
    trimmer: ContextTrimmer, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _trims(trimmer, 3)
    monkeypatch.setitem(sys.modules, "rjieba", None)  # as where no rjieba wheel is installed
    fallback = build_trimmer(SessionSettings())
    assert _trims(fallback, 3) == expected


def test_caches_do_not_change_the_result(
    trimmer: ContextTrimmer, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _trims(trimmer, 5)
    trimmer.clear_cache()
    assert _trims(trimmer, 5) == expected
    monkeypatch.setattr(trimming, "_WORD_MEMO_SIZE", 3)  # the word memo refills many times
    small = build_trimmer(SessionSettings())
    assert _trims(small, 5) == expected
