"""Extended-resource names (k8s.io/kubernetes@v1.37.2 pkg/apis/core/v1/helper): which resource names are native,
which are extended, the implicit name every DeviceClass serves, and what the API server says about a DeviceClass's
`extendedResourceName` (apimachinery api/validate strfmt ExtendedResourceName, the 1.37 server's words)."""

from __future__ import annotations

import functools

from dragoman.fleet.k8s.names import is_qualified_name

# The implicit extended-resource name every DeviceClass serves (`deviceclass.resource.kubernetes.io/<class>`).
DEVICECLASS_PREFIX = "deviceclass.resource.kubernetes.io/"
# ResourceQuota's name for a request of a resource (v1.DefaultResourceRequestsPrefix).
REQUESTS_PREFIX = "requests."
_NATIVE_DOMAIN = "kubernetes.io/"  # v1.ResourceDefaultNamespacePrefix: any *kubernetes.io/ name is native


def is_native_resource(name: str) -> bool:
    """IsNativeResource: no domain, or a *kubernetes.io/ one."""
    return "/" not in name or _NATIVE_DOMAIN in name


@functools.lru_cache(maxsize=4096)
def is_extended_resource_name(name: str) -> bool:
    """IsExtendedResourceName: not native, not `requests.`-prefixed, and a qualified name as `requests.<name>`."""
    if is_native_resource(name) or name.startswith(REQUESTS_PREFIX):
        return False
    return not is_qualified_name(REQUESTS_PREFIX + name)


def is_dra_extended_resource_name(name: str) -> bool:
    """A name a pod may request that a device serves: an extended resource (a device plugin's, or a DeviceClass's
    extendedResourceName) or a DeviceClass's implicit `deviceclass.resource.kubernetes.io/<class>`."""
    return name.startswith(DEVICECLASS_PREFIX) or is_extended_resource_name(name)


def extended_resource_name_errors(value: str) -> list[str]:
    """Why a DeviceClass cannot serve `value` as its extendedResourceName, in the API server's words ([] when it
    can): a domain-prefixed name, not in kubernetes.io, no `requests.` prefix, a label key after one."""
    errs = []
    if "/" not in value:
        errs.append("a name must be a domain-prefixed path, such as 'example.com/my-prop'")
    elif _NATIVE_DOMAIN in value:
        errs.append('must not have "kubernetes.io/" domain')
    if value.startswith(REQUESTS_PREFIX):
        errs.append('must not have "requests." prefix')
    errs += is_qualified_name(REQUESTS_PREFIX + value)
    return errs
