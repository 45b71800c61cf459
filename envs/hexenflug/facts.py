"""The facts of ``hexenflug_v1``, read by the registry, the environment and the batched engine."""

from cauldron.envs.core.facts import EnvSpec

FACTS = EnvSpec(
    name="hexenflug_v1",
    module=__package__,
    players=(2, 5),
    default_players=3,
    cooperative=False,
    hidden_hands=False,
)
