"""The facts of ``hocus_pocus_v1``, read by the registry, the environment and the batched engine."""

from cauldron.envs.core.facts import EnvSpec

FACTS = EnvSpec(
    name="hocus_pocus_v1",
    module=__package__,
    players=(2, 6),
    default_players=4,
    cooperative=True,
    score="stuns",
)
