"""The one wording of a long list in messages: the first few, then "and N more" (kube/wording.py)."""

from gpulint.kube.wording import first_and_more


def test_every_item_when_they_fit_and_a_count_of_the_rest_when_not() -> None:
    assert first_and_more(["a", "b", "c"]) == "a, b, c"
    assert first_and_more(["a", "b", "c", "d", "e"]) == "a, b, c and 2 more"
    assert first_and_more([]) == ""


def test_the_separators_and_noun_the_callers_word_differently() -> None:
    assert first_and_more(["gpu", "cpu", "mem"], 2, sep=" and ") == "gpu and cpu and 1 more"
    assert first_and_more(["x (2)", "y (1)", "z (1)"], 1, last=", and ") == "x (2), and 2 more"
    assert first_and_more(["n1 8", "n2 8"], 1, noun="nodes") == "n1 8 and 1 more nodes"
