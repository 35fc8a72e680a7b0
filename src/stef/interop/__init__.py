"""Meet agents where they log: traces and logs in, evaluation results out, an SDK.

Readers: ``spans`` (OTLP JSON/protobuf), ``conventions`` (GenAI and OpenInference
attributes), ``calls`` (text-to-SQL calls → records), ``assemble`` (traces across requests),
``langfuse``, ``fieldmap`` (any JSON log), ``readers`` (files). Live: ``otlp_http``
(``/v1/traces``), ``ingest`` (a background evaluate-and-store worker). Results out:
``sinks`` (OTel events, Langfuse scores, Phoenix annotations), ``delivery``. ``sdk``:
``stef.capture``. Beside ``monitor``; only ``cli`` (and the service) import it.
"""
