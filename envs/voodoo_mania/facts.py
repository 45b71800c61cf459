"""The facts of ``voodoo_mania_v1``, read by the registry, the environments and the batched
engine."""

from cauldron.envs.core.facts import EnvSpec

FACTS = EnvSpec(
    name="voodoo_mania_v1",
    module=__package__,
    players=(2, 6),
    default_players=4,
    cooperative=False,
    parallel=True,
    lower_is_better=True,
)
