// Bus module.
