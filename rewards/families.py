"""Imports each task family module so that it registers itself; the list is the single place families are named."""

import rewards.graph
import rewards.grapharena
import rewards.graphwiz
import rewards.instruction_following
import rewards.judge
import rewards.logicif
import rewards.math_answers
import rewards.math_choice
import rewards.reasoning_gym_tasks  # noqa: F401
