"""Sentiment per customer turn: negative, neutral or positive, with a signed score.

A small linear model over character and word n-grams and a pack's cue words
(``sentiment_lexicon.yaml``), trained at first start from the pack's labelled turns
(``sentiment.jsonl``) and cached like the intent model. Reading a turn is plain Python.

Importing this package loads no sklearn; training imports it.
"""

from hermes_desk.sentiment.evaluate import SentimentReport, evaluate_sentiment
from hermes_desk.sentiment.lexicon import CueHits, SentimentLexicon
from hermes_desk.sentiment.model import (
    LABELS,
    Sentiment,
    SentimentLabel,
    SentimentModel,
    sentiment_features,
)
from hermes_desk.sentiment.training import (
    LabelledText,
    load_labelled,
    load_or_train_sentiment,
    train_sentiment,
)

__all__ = [
    "LABELS",
    "CueHits",
    "LabelledText",
    "Sentiment",
    "SentimentLabel",
    "SentimentLexicon",
    "SentimentModel",
    "SentimentReport",
    "evaluate_sentiment",
    "load_labelled",
    "load_or_train_sentiment",
    "sentiment_features",
    "train_sentiment",
]
