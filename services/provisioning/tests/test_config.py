"""Settings: the GPU double is for development only; the sealing key and the node key are required."""

import pytest
from pydantic import ValidationError

from kernodeck_provisioning.config import ProvisioningSettings
from kernodeck_provisioning.crypto import SecretBox, new_key
from kernodeck_provisioning.domain import Access

pytestmark = pytest.mark.unit

REQUIRED = {"secret_key": new_key(), "ssh_key_path": "/etc/kernodeck/provisioning_ed25519"}


def test_production_refuses_the_gpu_double():
    with pytest.raises(ValidationError, match="development only"):
        ProvisioningSettings(environment="production", accept_gpu_double=True, **REQUIRED)
    assert ProvisioningSettings(environment="development", accept_gpu_double=True, **REQUIRED).accept_gpu_double


def test_production_is_the_default_and_refuses_the_double_unless_asked():
    settings = ProvisioningSettings(**REQUIRED)
    assert (settings.environment, settings.accept_gpu_double) == ("production", False)


@pytest.mark.parametrize("missing", ["secret_key", "ssh_key_path"])
def test_the_keys_are_required(missing):
    with pytest.raises(ValidationError):
        ProvisioningSettings(**{**REQUIRED, missing: ""})


def test_access_is_sealed_and_only_its_key_opens_it():
    access = Access("10.0.0.1", 22, "kduser", "http://10.0.0.1:18800/lab", "token-value")
    sealed = SecretBox(REQUIRED["secret_key"]).seal(access)
    assert "token-value" not in sealed
    assert SecretBox(REQUIRED["secret_key"]).open(sealed) == access
    with pytest.raises(ValueError):
        SecretBox(new_key()).open(sealed)
