"""GraphWiz's own verdict (``evaluation/evaluate_nlg.py::check``, Graph-Reasoning-LLM a4dd682), so that the
``graphwiz_accuracy`` metric is the number of its tables.

Both the reference and the response are lower-cased first, as its caller does. Its rules, kept here as written:

* Yes/no tasks: with ``###`` in the response, right when the reference says ``yes`` and ``yes`` occurs anywhere
  after the last ``###`` (as a substring), or the reference says ``no`` and ``no`` occurs there (``node`` and
  ``not`` contain it); without ``###``, the last whole word ``yes``/``no`` must match the reference.
* Shortest, flow, triplet: the last unsigned number after the last ``###`` (digits joined across ``1,234``; 0.0
  where there is none) within 0.01 of the reference's last number.
* Topology: with ``###``, the reference's text after ``###`` and the response's (outer spaces stripped) must
  contain one another; without it, any comma-separated piece of the reference found in the response is right.
"""

from __future__ import annotations

import re

from rewards.graphwiz.problem import NUMBER_TASKS, YES_NO_TASKS


def _last_number(text: str) -> float:
    text = re.sub(r"(\d),(\d)", r"\g<1>\g<2>", text)
    found = re.findall(r"(\d+(\.\d+)?)", text)
    return float(found[-1][0]) if found else 0.0


def graphwiz_correct(task: str, reference: str, response: str) -> bool:
    """GraphWiz's verdict on ``response`` (its ``lstrip``-ed output) for the ``reference`` answer string."""
    truth, predict = reference.lower(), response.lstrip().lower()
    if task in YES_NO_TASKS:
        if "###" in predict:
            tail = predict.split("###")[-1]
            return ("yes" in truth and "yes" in tail) or ("no" in truth and "no" in tail)
        matches = re.findall(r"\b(yes|no)\b", predict, flags=re.IGNORECASE)
        if not matches:
            return False
        last = matches[-1].lower()
        return (last == "yes" and "yes" in truth) or (last == "no" and "no" in truth)
    if task in NUMBER_TASKS:
        return abs(_last_number(truth) - _last_number(predict.split("###")[-1])) < 1e-2
    if "###" in predict:
        pre = predict.split("###")[-1].strip(" ")
        ref = truth.split("###")[-1].strip(" ")
        return ref in pre or pre in ref
    return any(t in predict or t.strip(" ") in predict for t in truth.split("###")[-1].split(","))
