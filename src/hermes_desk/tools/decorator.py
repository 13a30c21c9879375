"""``@tool``: a typed Python function becomes a :class:`ToolSpec` plus an in-process binding.

::

    @tool(fallback="库存系统繁忙，请稍后再试。", timeout_s=1, effect="read")
    async def check_stock(sku: str, warehouse: Literal["bj", "sh"] = "bj") -> StockLevel:
        \"\"\"查询库存.\"\"\"

The argument schema comes from the signature (through pydantic: ``date`` → ``format: date``,
``Literal`` → ``enum``, ``X | None`` → nullable), the description from the docstring, the
``response_format`` from the return annotation. The executor validates arguments against that
schema before the call; the binding then converts them to the annotated Python types (a ``date``
argument arrives as a ``datetime.date``) and the result back to JSON.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, get_type_hints, overload

from pydantic import ConfigDict, TypeAdapter, create_model
from pydantic import ValidationError as PydanticValidationError

from hermes_desk.errors import ValidationError
from hermes_desk.tools.binding import CallContext, HealthFunction, PythonBinding
from hermes_desk.tools.spec import DEFAULT_FALLBACK, BindingSpec, Effect, ToolSpec

__all__ = ["DecoratedTool", "tool"]


class DecoratedTool:
    """The function (still callable as before), its :attr:`spec` and its :attr:`binding`."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None,
        description: str | None,
        timeout_s: float | None,
        fallback: str | None,
        response_format: Mapping[str, Any] | None,
        health: HealthFunction | None,
        sensitive: Sequence[str],
        effect: Effect = "write",
        approval_exempt: str | None = None,
        explain: Mapping[str, str] | None = None,
        owner_field: str | None = None,
    ) -> None:
        self.fn = fn
        hints = get_type_hints(fn)
        fields: dict[str, Any] = {}
        for pname, param in inspect.signature(fn).parameters.items():
            if pname == "context":
                continue
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"@tool {fn.__name__}: *args/**kwargs cannot be described")
            annotation = hints.get(pname, Any)
            default = ... if param.default is param.empty else param.default
            fields[pname] = (annotation, default)
        model = create_model(
            f"{fn.__name__}_arguments",
            __config__=ConfigDict(extra="forbid"),
            **fields,
        )
        self._model = model
        parameters = _without_titles(model.model_json_schema())
        returns = hints.get("return", Any)
        self._result = None if returns in (Any, None, type(None)) else TypeAdapter(returns)
        if response_format is None and self._result is not None:
            response_format = _without_titles(self._result.json_schema(mode="serialization"))
        doc = inspect.getdoc(fn) or ""
        self.spec = ToolSpec(
            name=name or fn.__name__,
            description=(description or doc.strip() or fn.__name__)[:1024],
            parameters=parameters,
            binding=BindingSpec(kind="python", options={"function": fn.__qualname__}),
            response_format=response_format,
            timeout_s=timeout_s,
            fallback=fallback or DEFAULT_FALLBACK,
            source=f"{fn.__module__}.{fn.__qualname__}",
            sensitive=tuple(sensitive),
            effect=effect,
            approval_exempt=approval_exempt,
            explain=dict(explain or {}),
            owner_field=owner_field,
        )
        self.binding = PythonBinding(self._invoke, health=health)
        self._is_async = inspect.iscoroutinefunction(fn)
        self._wants_context = "context" in inspect.signature(fn).parameters

    async def _invoke(self, context: CallContext, **arguments: Any) -> Any:
        try:
            parsed = self._model.model_validate(arguments)
        except PydanticValidationError as exc:  # the caller's arguments, not the tool, are wrong
            raise ValidationError(f"@tool {self.spec.name}: arguments do not convert") from exc
        kwargs = {key: getattr(parsed, key) for key in type(parsed).model_fields}
        if self._wants_context:
            kwargs["context"] = context
        if self._is_async:
            result = await self.fn(**kwargs)
        else:
            import anyio.to_thread

            result = await anyio.to_thread.run_sync(lambda: self.fn(**kwargs))
        if self._result is not None:
            return self._result.dump_python(result, mode="json")
        return result

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


@overload
def tool(fn: Callable[..., Any], /) -> DecoratedTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    timeout_s: float | None = None,
    fallback: str | None = None,
    response_format: Mapping[str, Any] | None = None,
    health: HealthFunction | None = None,
    sensitive: Sequence[str] = (),
    effect: Effect = "write",
    approval_exempt: str | None = None,
    explain: Mapping[str, str] | None = None,
    owner_field: str | None = None,
) -> Callable[[Callable[..., Any]], DecoratedTool]: ...


def tool(
    fn: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    timeout_s: float | None = None,
    fallback: str | None = None,
    response_format: Mapping[str, Any] | None = None,
    health: HealthFunction | None = None,
    sensitive: Sequence[str] = (),
    effect: Effect = "write",
    approval_exempt: str | None = None,
    explain: Mapping[str, str] | None = None,
    owner_field: str | None = None,
) -> DecoratedTool | Callable[[Callable[..., Any]], DecoratedTool]:
    """Describe a Python function as a tool; use bare (``@tool``) or with options.

    ``effect`` is ``write`` unless you say ``effect="read"``: a tool that says nothing is taken
    to change something, the safe side (SPEC §8 X1). ``approval_exempt``, ``explain`` and
    ``owner_field`` are the :class:`~hermes_desk.tools.spec.ToolSpec` fields of the same names.
    """

    def wrap(func: Callable[..., Any]) -> DecoratedTool:
        return DecoratedTool(
            func,
            name=name,
            description=description,
            timeout_s=timeout_s,
            fallback=fallback,
            response_format=response_format,
            health=health,
            sensitive=sensitive,
            effect=effect,
            approval_exempt=approval_exempt,
            explain=explain,
            owner_field=owner_field,
        )

    return wrap(fn) if fn is not None else wrap


def _without_titles(schema: Any) -> Any:
    """pydantic adds a ``title`` to every schema; models only need descriptions."""
    if isinstance(schema, dict):
        return {
            k: _without_titles(v)
            for k, v in schema.items()
            if not (k == "title" and isinstance(v, str))
        }
    if isinstance(schema, list):
        return [_without_titles(v) for v in schema]
    return schema
