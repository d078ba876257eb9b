"""The one module that talks to MTurk: boto3's `mturk` client (AWS's own service model and signing), with every
call's timeout set. Reads retry (botocore's standard mode); calls that change something are made once
(`total_max_attempts=1`) and their failure is reported with what is known of its effect."""
from __future__ import annotations

import logging
from typing import Any

from django.conf import settings

from core.errors import ApplicationError
from platforms.clients.errors import NOT_SENT, REFUSED, UNKNOWN, PlatformCallError
from platforms.error_codes import (
    PLATFORM_NO_ANSWER,
    PLATFORM_RATE_LIMITED,
    PLATFORM_REFUSED,
    PLATFORM_SERVER_ERROR,
    PLATFORM_UNAUTHORIZED,
    PLATFORM_UNREACHABLE,
)

logger = logging.getLogger(__name__)

SANDBOX_ENDPOINT = "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
LIVE_ENDPOINT = "https://mturk-requester.us-east-1.amazonaws.com"
THROTTLED = {"Throttling", "ThrottlingException", "TooManyRequestsException", "RequestLimitExceeded"}


def _snake(operation: str) -> str:
    # heavy: boto3/botocore load only when an MTurk account is used
    from botocore import xform_name

    return xform_name(operation)  # CreateHITType -> create_hit_type, as boto3 names its methods


def mturk_endpoint(*, sandbox: bool, endpoint_url: str = "") -> str:
    return endpoint_url or settings.MTURK_ENDPOINT_URL or (SANDBOX_ENDPOINT if sandbox else LIVE_ENDPOINT)


def mturk_clients(*, sandbox: bool, endpoint_url: str = "", profile: str = "") -> tuple[Any, Any]:
    """(client for reads, client for writes): the same credentials from boto3's chain, two retry policies."""
    # heavy: boto3/botocore load only when an MTurk account is used
    import boto3
    from botocore.config import Config

    timeout = float(settings.PLATFORM_HTTP_TIMEOUT_SECONDS)
    session = boto3.Session(profile_name=profile or None)
    endpoint = mturk_endpoint(sandbox=sandbox, endpoint_url=endpoint_url)
    reads = Config(connect_timeout=min(timeout, 10), read_timeout=timeout,
                   retries={"mode": "standard", "max_attempts": 4})
    writes = Config(connect_timeout=min(timeout, 10), read_timeout=timeout, retries={"total_max_attempts": 1})
    return (session.client("mturk", region_name="us-east-1", endpoint_url=endpoint, config=reads),
            session.client("mturk", region_name="us-east-1", endpoint_url=endpoint, config=writes))


def mturk_call(client: Any, operation: str, params: dict[str, Any], *, what: str) -> dict[str, Any]:
    """One MTurk call, its errors mapped to PlatformCallError (outcome refused / not_sent / unknown)."""
    # heavy: boto3/botocore load only when an MTurk account is used
    from botocore.exceptions import (
        BotoCoreError,
        ClientError,
        ConnectTimeoutError,
        EndpointConnectionError,
        NoCredentialsError,
    )

    try:
        response = getattr(client, _snake(operation))(**params)
    except NoCredentialsError:
        raise ApplicationError("MTurk: boto3 found no AWS credentials (environment, ~/.aws/credentials or an "
                               "instance role); set them for the account's profile.", code=PLATFORM_UNAUTHORIZED
                               ) from None
    except ClientError as exc:
        error = exc.response.get("Error", {})
        code, message = error.get("Code", ""), error.get("Message", "")
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 400
        logger.info("mturk %s -> %s %s", operation, status, code)
        if code in THROTTLED:
            raise PlatformCallError(f"MTurk is rate-limiting requests while {what}; nothing was done.",
                                    outcome=REFUSED, code=PLATFORM_RATE_LIMITED, status=503,
                                    platform_status=status, retry_after=5) from None
        if status >= 500 or code in ("ServiceFault", "InternalFailure", "ServiceUnavailable"):
            raise PlatformCallError(f"MTurk answered {code or status} while {what}; the request may or may not "
                                    "have been carried out.", outcome=UNKNOWN, code=PLATFORM_SERVER_ERROR,
                                    platform_status=status) from None
        if code in ("AccessDenied", "UnrecognizedClientException", "InvalidClientTokenId",
                    "SignatureDoesNotMatch"):
            raise PlatformCallError(f"MTurk refused the AWS credentials ({code}) while {what}.", outcome=REFUSED,
                                    code=PLATFORM_UNAUTHORIZED, status=400, platform_status=status) from None
        raise PlatformCallError(f"MTurk refused {what} ({code}): {message}", outcome=REFUSED,
                                code=PLATFORM_REFUSED, status=400, platform_status=status,
                                body={"code": code, "message": message}) from None
    except (EndpointConnectionError, ConnectTimeoutError) as exc:
        raise PlatformCallError(f"MTurk could not be reached while {what} ({type(exc).__name__}); nothing was sent.",
                                outcome=NOT_SENT, code=PLATFORM_UNREACHABLE, status=503) from None
    except BotoCoreError as exc:  # read timeout, connection closed: after sending
        raise PlatformCallError(f"MTurk did not answer while {what} ({type(exc).__name__}); the request may have "
                                "been carried out.", outcome=UNKNOWN, code=PLATFORM_NO_ANSWER, status=504) from None
    logger.info("mturk %s -> ok", operation)
    return response
