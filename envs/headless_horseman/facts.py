"""The facts of ``headless_horseman_v1``, read by the registry, the environments and the batched
engine."""

from cauldron.envs.core.facts import EnvSpec

FACTS = EnvSpec(
    name="headless_horseman_v1",
    module=__package__,
    players=(2, 4),
    default_players=3,
    cooperative=True,
    parallel=True,
    score="scares",
    lower_is_better=True,
)
