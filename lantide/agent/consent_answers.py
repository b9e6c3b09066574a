"""Is the analyst's answer a yes? A rule table, not English keywords.

Consent to statistical analysis is read from the answer to an ``ask_user`` question of kind
``analysis_consent``. In the app its choices are buttons: by contract the first choice
approves and any other declines, so a click is never guessed at. A typed answer is judged
by the table below, in the analyst's language:

- it is a yes when it starts with an approval of the table and nothing in it declines,
  hedges or asks back ("Yes, go ahead", "可以，请继续", "Ja, bitte", "да");
- anything else is not a yes: a refusal ("nein", "不可以", "нет", "non"), a mix ("yes but
  no"), a delay ("not yet", "später"), a question ("yes?"), or words the table does not know.

Doubt always reads as not-yes: the agent then asks again or stays descriptive.
"""

from __future__ import annotations

import re
import unicodedata

YES, NO, UNCLEAR = "yes", "no", "unclear"

# Approvals an answer may start with, by language (lower case; matched on whole words, or
# as a prefix for the languages written without spaces).
APPROVALS: dict[str, tuple[str, ...]] = {
    "en": (
        "yes",
        "y",
        "yeah",
        "yep",
        "yup",
        "ok",
        "okay",
        "sure",
        "go ahead",
        "go for it",
        "do it",
        "please do",
        "proceed",
        "approved",
        "approve",
        "i approve",
        "agreed",
        "i agree",
        "agree",
        "confirm",
        "confirmed",
        "absolutely",
        "of course",
        "fine",
        "sounds good",
        "let's do it",
        "lets do it",
    ),
    "zh": (
        "是",
        "是的",
        "好",
        "好的",
        "可以",
        "行",
        "同意",
        "确认",
        "確認",
        "对",
        "對",
        "嗯",
        "当然",
        "當然",
        "没错",
        "请继续",
        "請繼續",
        "继续",
        "繼續",
    ),
    "ja": (
        "はい",
        "ええ",
        "うん",
        "お願いします",
        "おねがいします",
        "どうぞ",
        "了解",
        "承知しました",
        "進めてください",
        "実行してください",
        "同意します",
        "オーケー",
    ),
    "de": (
        "ja",
        "jawohl",
        "klar",
        "einverstanden",
        "gerne",
        "gern",
        "mach das",
        "mach es",
        "bitte",
        "in ordnung",
        "genehmigt",
        "los",
    ),
    "fr": (
        "oui",
        "d'accord",
        "dac",
        "bien sûr",
        "allez-y",
        "vas-y",
        "volontiers",
        "je suis d'accord",
        "ça marche",
        "approuvé",
    ),
    "es": (
        "sí",
        "si",
        "claro",
        "de acuerdo",
        "adelante",
        "vale",
        "por supuesto",
        "dale",
        "aprobado",
        "hazlo",
    ),
    "pt": (
        "sim",
        "claro",
        "pode",
        "pode sim",
        "de acordo",
        "com certeza",
        "aprovado",
        "pode fazer",
        "vá em frente",
    ),
    "it": (
        "sì",
        "si",
        "certo",
        "va bene",
        "d'accordo",
        "procedi",
        "vai",
        "approvato",
        "certamente",
    ),
    "nl": (
        "ja",
        "jazeker",
        "prima",
        "akkoord",
        "goed",
        "graag",
        "ga je gang",
        "ga door",
        "natuurlijk",
        "doe maar",
    ),
    "ru": (
        "да",
        "конечно",
        "хорошо",
        "давай",
        "давайте",
        "согласен",
        "согласна",
        "ладно",
        "можно",
        "ок",
        "разрешаю",
    ),
}

# Words that make an answer not a yes wherever they appear: refusals, negations, hedges,
# delays. Whole words for the languages written with spaces.
DECLINING_WORDS: dict[str, tuple[str, ...]] = {
    "en": (
        "no",
        "nope",
        "nah",
        "not",
        "don't",
        "dont",
        "do not",
        "never",
        "stop",
        "cancel",
        "wait",
        "later",
        "maybe",
        "perhaps",
        "but",
        "unless",
        "however",
        "hold",
        "skip",
        "without",
        "instead",
        "rather",
        "neither",
        "nor",
        "refuse",
        "decline",
        "declined",
        "deny",
        "denied",
        "negative",
        "if",
        "except",
        "yet",
        "isn't",
        "shouldn't",
        "won't",
        "can't",
        "cannot",
    ),
    "de": (
        "nein",
        "nicht",
        "kein",
        "keine",
        "nie",
        "niemals",
        "aber",
        "später",
        "warte",
        "vielleicht",
        "noch",
        "abbrechen",
        "lieber",
        "ohne",
        "doch",
    ),
    "fr": (
        "non",
        "pas",
        "jamais",
        "mais",
        "plus tard",
        "attends",
        "attendez",
        "peut-être",
        "sans",
        "refuse",
        "ne",
    ),
    "es": (
        "no",
        "nunca",
        "pero",
        "todavía",
        "aún",
        "espera",
        "quizás",
        "quizá",
        "tal vez",
        "sin",
        "luego",
        "ni",
    ),
    "pt": (
        "não",
        "nao",
        "nunca",
        "mas",
        "ainda",
        "espera",
        "espere",
        "talvez",
        "sem",
        "nem",
        "depois",
    ),
    "it": ("no", "non", "mai", "ma", "però", "ancora", "aspetta", "forse", "senza", "dopo"),
    "nl": ("nee", "niet", "geen", "nooit", "maar", "nog", "wacht", "misschien", "zonder", "later"),
    "ru": (
        "нет",
        "не",
        "ни",
        "никогда",
        "но",
        "однако",
        "позже",
        "потом",
        "подожди",
        "подождите",
        "может",
        "возможно",
        "без",
        "пока",
    ),
}

# Languages written without spaces: any occurrence declines ("不可以", "没有", "いいえ",
# "しないで", "ダメ"). Some approvals hide a negation ("没问题": no problem); reading those
# as not-yes only means the agent asks again.
DECLINING_MARKS: tuple[str, ...] = (
    "不",
    "没",
    "沒",
    "别",
    "別",
    "否",
    "勿",
    "莫",
    "暂",
    "暫",
    "但",
    "先别",
    "等",
    "吗",
    "嗎",
    "呢",
    "再说",
    "再說",
    "也许",
    "也許",
    "可能",
    "いいえ",
    "いや",
    "ない",
    "ません",
    "だめ",
    "ダメ",
    "駄目",
    "でも",
    "けど",
    "待って",
    "まだ",
    "やめ",
    "止め",
    "結構",
    "いいです",
    "かな",
    "か?",
    "か？",
    "たぶん",
    "多分",
    "아니",
    "안 ",
    "없",
    "싫",
)

_QUESTION = ("?", "？", "¿")
_SPACE_FREE = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uac00-\ud7af]")


def _normalize(text: str) -> str:
    text = unicodedata.normalize("NFKC", text or "").casefold().replace("’", "'")
    # punctuation becomes a space (an apostrophe inside a word stays: "don't", "d'accord")
    text = re.sub(r"[^\w\s'-]|(?<!\w)'|'(?!\w)|(?<!\w)-|-(?!\w)", " ", text)
    return " ".join(text.split())


def _label(text: str) -> str:
    """A button's text as it arrives: exact but for case, spacing and width."""
    return " ".join(unicodedata.normalize("NFKC", text or "").casefold().split())


def _has_phrase(words: str, phrase: str, *, at_start: bool = False) -> bool:
    if _SPACE_FREE.search(phrase):
        return words.startswith(phrase) if at_start else phrase in words
    pattern = (r"^" if at_start else r"(?:^|\s)") + re.escape(phrase) + r"(?:$|\s)"
    return re.search(pattern, words) is not None


def _declines(raw: str, words: str) -> bool:
    if any(q in raw for q in _QUESTION):
        return True  # a question back is not consent
    if any(mark in raw.casefold() for mark in DECLINING_MARKS):
        return True
    if re.search(r"(?:^|\s)n'", words):  # French elision: "n'importe", "je n'ai pas"
        return True
    return any(_has_phrase(words, w) for table in DECLINING_WORDS.values() for w in table)


def judge_free_text(answer: str) -> str:
    """YES, NO or UNCLEAR for a typed answer (see the module docstring)."""
    raw = unicodedata.normalize("NFKC", answer or "")
    words = _normalize(raw)
    if not words:
        return UNCLEAR
    if _declines(raw, words):
        return NO
    if any(_has_phrase(words, p, at_start=True) for table in APPROVALS.values() for p in table):
        return YES
    return UNCLEAR


def judge_answer(answer: str, choices: list[str] | None = None) -> str:
    """YES, NO or UNCLEAR for the answer to a consent question with ``choices``.

    A click on the first choice approves, on any other declines (unless the text of the
    first choice itself declines: then the question was malformed and nothing approves).
    A typed answer is judged by the table; a refusal is never read as yes.
    """
    given = _label(answer)
    options = choices or []
    labels = [_label(c) for c in options]
    if labels and given in labels:
        if given != labels[0]:
            return NO
        return YES if judge_free_text(options[0]) != NO else UNCLEAR
    return judge_free_text(answer)
