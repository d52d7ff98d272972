"""Which CEL environment applies where (k8s.io/dynamic-resource-allocation@v0.37.2 cel.GetCompiler, and
k8s.io/kubernetes@v1.37.2 pkg/apis/resource/validation validateCELExpression):

- a selector being written (a create, or an update that changes the selectors) is checked by the API server in the
  new-expression environment (NewExpressions: length and cost limits, only the fields today's gates declare);
- a selector already stored is not checked again (an update that keeps the selectors skips it), and the scheduler
  compiles it in the stored-expression environment (StoredExpressions: every versioned option, no length or cost
  limit), so a class written under other limits keeps working.

dragoman asks the same questions: what the cluster holds (DeviceClasses and claims in the model, the diagnosis, the
simulated allocator) is read as stored; what a person types (`dragoman cel`, the playground) is checked as new,
because that is what the API server will say when it is applied.
"""

from __future__ import annotations

from dragoman.fleet.cel.api import NEW_EXPRESSIONS, STORED_EXPRESSIONS, Environment

WRITTEN = NEW_EXPRESSIONS  # what the API server checks a selector being written with
STORED = STORED_EXPRESSIONS  # what the scheduler compiles a stored selector with


def selectors_are_stored(selectors: object, old_selectors: object, *, updating: bool) -> bool:
    """On a write, whether the selectors count as stored (an update that keeps them exactly): the API server then
    does not check them; otherwise it checks them in WRITTEN."""
    return updating and selectors == old_selectors


def validation_environment(selectors: object, old_selectors: object, *, updating: bool) -> Environment | None:
    """The environment the API server checks a write's selectors in, or None when it does not check them."""
    return None if selectors_are_stored(selectors, old_selectors, updating=updating) else WRITTEN
