"""Extended-resource names: the implicit name every DeviceClass serves."""

from __future__ import annotations

# The implicit extended-resource name every DeviceClass serves (`deviceclass.resource.kubernetes.io/<class>`).
DEVICECLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
