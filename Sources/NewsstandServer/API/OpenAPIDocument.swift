/// The API's OpenAPI 3.1 document, served at `/api/openapi.json`. Its source is `openapi.json` beside this
/// file (the committed document, which schemathesis reads); `make openapi` writes this file from it, and
/// `OpenAPITests` holds the two equal byte for byte.
enum OpenAPIDocument {
    static let json = #"""
{
  "openapi": "3.1.0",
  "info": {
    "title": "issues serve",
    "version": "1",
    "description": "The JSON API of `issues serve`. Every GET answers with an ETag and 304 to a matching If-None-Match. Every state-changing request needs the `X-CSRF-Token` of GET /api/session and an Origin (or Referer) naming this server; beyond loopback, `Authorization: Bearer TOKEN` too. Errors are one shape, `{\"error\":{\"code\",\"message\"}}`, whose message is the CLI's."
  },
  "servers": [
    {
      "url": "/"
    }
  ],
  "paths": {
    "/api/session": {
      "get": {
        "operationId": "getSession",
        "summary": "This run's CSRF token and the event cursor.",
        "parameters": [
          {
            "name": "If-None-Match",
            "in": "header",
            "required": false,
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Session"
                }
              }
            },
            "headers": {
              "ETag": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "304": {
            "description": "Not modified: the If-None-Match named the current ETag."
          },
          "401": {
            "$ref": "#/components/responses/Error401"
          }
        }
      }
    },
    "/api/issues": {
      "get": {
        "operationId": "listIssues",
        "summary": "A page of issues, newest first (or the changes since an event cursor).",
        "parameters": [
          {
            "name": "status",
            "in": "query",
            "required": false,
            "description": "An issue status or a shelf badge.",
            "schema": {
              "type": "string",
              "enum": [
                "none",
                "pending",
                "downloading",
                "available",
                "failed",
                "new",
                "read",
                "pinned"
              ]
            }
          },
          {
            "name": "publication",
            "in": "query",
            "required": false,
            "description": "Only issues of this publication.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "subscription",
            "in": "query",
            "required": false,
            "description": "Only issues of this subscription (its id).",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "q",
            "in": "query",
            "required": false,
            "description": "A case-insensitive part of the name.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "offset",
            "in": "query",
            "required": false,
            "description": "How many matching issues to skip.",
            "schema": {
              "type": "integer",
              "minimum": 0,
              "maximum": 100000000
            }
          },
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "Issues per page.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 200,
              "default": 48
            }
          },
          {
            "name": "since",
            "in": "query",
            "required": false,
            "description": "An event cursor: the issues changed after it (and `removed`), instead of a page.",
            "schema": {
              "type": "integer",
              "minimum": 0,
              "maximum": 9223372036854775807
            }
          },
          {
            "name": "If-None-Match",
            "in": "header",
            "required": false,
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/IssueList"
                }
              }
            },
            "headers": {
              "ETag": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "304": {
            "description": "Not modified: the If-None-Match named the current ETag."
          },
          "400": {
            "$ref": "#/components/responses/Error400"
          },
          "401": {
            "$ref": "#/components/responses/Error401"
          }
        }
      }
    },
    "/api/issues/{key}": {
      "get": {
        "operationId": "getIssue",
        "parameters": [
          {
            "name": "key",
            "in": "path",
            "required": true,
            "description": "The issue's key (32 hex digits, in every IssueEntry).",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "If-None-Match",
            "in": "header",
            "required": false,
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/IssueEntry"
                }
              }
            },
            "headers": {
              "ETag": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "304": {
            "description": "Not modified: the If-None-Match named the current ETag."
          },
          "401": {
            "$ref": "#/components/responses/Error401"
          },
          "404": {
            "$ref": "#/components/responses/Error404"
          }
        }
      },
      "delete": {
        "operationId": "removeIssue",
        "summary": "Removes the issue, its folder and its downloads.",
        "parameters": [
          {
            "name": "key",
            "in": "path",
            "required": true,
            "description": "The issue's key (32 hex digits, in every IssueEntry).",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "X-CSRF-Token",
            "in": "header",
            "required": true,
            "description": "This run's CSRF token, from GET /api/session.",
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Message"
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Error401"
          },
          "403": {
            "$ref": "#/components/responses/Error403"
          },
          "404": {
            "$ref": "#/components/responses/Error404"
          }
        }
      }
    },
    "/api/issues/{key}/assets": {
      "get": {
        "operationId": "getIssueAssets",
        "parameters": [
          {
            "name": "key",
            "in": "path",
            "required": true,
            "description": "The issue's key (32 hex digits, in every IssueEntry).",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "If-None-Match",
            "in": "header",
            "required": false,
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/AssetReport"
                  }
                }
              }
            },
            "headers": {
              "ETag": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "304": {
            "description": "Not modified: the If-None-Match named the current ETag."
          },
          "401": {
            "$ref": "#/components/responses/Error401"
          },
          "404": {
            "$ref": "#/components/responses/Error404"
          }
        }
      }
    },
    "/api/issues/{key}/{action}": {
      "post": {
        "operationId": "issueAction",
        "summary": "download (202, runs in the background), pin, unpin, read, unread.",
        "parameters": [
          {
            "name": "key",
            "in": "path",
            "required": true,
            "description": "The issue's key (32 hex digits, in every IssueEntry).",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "action",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string",
              "enum": [
                "download",
                "pin",
                "unpin",
                "read",
                "unread"
              ]
            }
          },
          {
            "name": "X-CSRF-Token",
            "in": "header",
            "required": true,
            "description": "This run's CSRF token, from GET /api/session.",
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/IssueEntry"
                }
              }
            }
          },
          "202": {
            "description": "Download started",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/IssueEntry"
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Error401"
          },
          "403": {
            "$ref": "#/components/responses/Error403"
          },
          "404": {
            "$ref": "#/components/responses/Error404"
          }
        }
      }
    },
    "/api/subscriptions": {
      "get": {
        "operationId": "listSubscriptions",
        "parameters": [
          {
            "name": "If-None-Match",
            "in": "header",
            "required": false,
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {
                  "type": "array",
                  "items": {
                    "$ref": "#/components/schemas/SubscriptionReport"
                  }
                }
              }
            },
            "headers": {
              "ETag": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "304": {
            "description": "Not modified: the If-None-Match named the current ETag."
          },
          "401": {
            "$ref": "#/components/responses/Error401"
          }
        }
      },
      "post": {
        "operationId": "subscribe",
        "summary": "Subscribes to a feed (fetched now); new issues download in the background.",
        "parameters": [
          {
            "name": "X-CSRF-Token",
            "in": "header",
            "required": true,
            "description": "This run's CSRF token, from GET /api/session.",
            "schema": {
              "type": "string"
            }
          }
        ],
        "requestBody": {
          "required": true,
          "content": {
            "application/json": {
              "schema": {
                "type": "object",
                "required": [
                  "url"
                ],
                "properties": {
                  "url": {
                    "type": "string",
                    "format": "uri"
                  }
                }
              }
            }
          }
        },
        "responses": {
          "201": {
            "description": "Subscribed",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/SubscribeResult"
                }
              }
            }
          },
          "400": {
            "$ref": "#/components/responses/Error400"
          },
          "401": {
            "$ref": "#/components/responses/Error401"
          },
          "403": {
            "$ref": "#/components/responses/Error403"
          },
          "409": {
            "$ref": "#/components/responses/Error409"
          },
          "502": {
            "$ref": "#/components/responses/Error502"
          }
        }
      }
    },
    "/api/subscriptions/{id}": {
      "delete": {
        "operationId": "unsubscribe",
        "parameters": [
          {
            "name": "id",
            "in": "path",
            "required": true,
            "description": "The subscription's id.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "X-CSRF-Token",
            "in": "header",
            "required": true,
            "description": "This run's CSRF token, from GET /api/session.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "removeIssues",
            "in": "query",
            "required": false,
            "description": "Also remove its issues.",
            "schema": {
              "type": "string",
              "enum": [
                "true",
                "false"
              ]
            }
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Message"
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Error401"
          },
          "403": {
            "$ref": "#/components/responses/Error403"
          },
          "404": {
            "$ref": "#/components/responses/Error404"
          }
        }
      }
    },
    "/api/subscriptions/{id}/{action}": {
      "post": {
        "operationId": "subscriptionAction",
        "summary": "sync (202, in the background), pause, unpause.",
        "parameters": [
          {
            "name": "id",
            "in": "path",
            "required": true,
            "description": "The subscription's id.",
            "schema": {
              "type": "string"
            }
          },
          {
            "name": "action",
            "in": "path",
            "required": true,
            "schema": {
              "type": "string",
              "enum": [
                "sync",
                "pause",
                "unpause"
              ]
            }
          },
          {
            "name": "X-CSRF-Token",
            "in": "header",
            "required": true,
            "description": "This run's CSRF token, from GET /api/session.",
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Message"
                }
              }
            }
          },
          "202": {
            "description": "Sync started",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/Message"
                }
              }
            }
          },
          "401": {
            "$ref": "#/components/responses/Error401"
          },
          "403": {
            "$ref": "#/components/responses/Error403"
          },
          "404": {
            "$ref": "#/components/responses/Error404"
          }
        }
      }
    },
    "/api/events": {
      "get": {
        "operationId": "listEvents",
        "summary": "Events after a cursor, oldest first (at most `limit`). Live: GET /events (Server-Sent Events).",
        "parameters": [
          {
            "name": "since",
            "in": "query",
            "required": false,
            "description": "The last cursor seen.",
            "schema": {
              "type": "integer",
              "minimum": 0,
              "maximum": 9223372036854775807
            }
          },
          {
            "name": "limit",
            "in": "query",
            "required": false,
            "description": "At most this many.",
            "schema": {
              "type": "integer",
              "minimum": 1,
              "maximum": 500
            }
          },
          {
            "name": "If-None-Match",
            "in": "header",
            "required": false,
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "OK",
            "content": {
              "application/json": {
                "schema": {
                  "$ref": "#/components/schemas/EventList"
                }
              }
            },
            "headers": {
              "ETag": {
                "schema": {
                  "type": "string"
                }
              }
            }
          },
          "304": {
            "description": "Not modified: the If-None-Match named the current ETag."
          },
          "400": {
            "$ref": "#/components/responses/Error400"
          },
          "401": {
            "$ref": "#/components/responses/Error401"
          }
        }
      }
    },
    "/api/openapi.json": {
      "get": {
        "operationId": "getOpenAPI",
        "parameters": [
          {
            "name": "If-None-Match",
            "in": "header",
            "required": false,
            "schema": {
              "type": "string"
            }
          }
        ],
        "responses": {
          "200": {
            "description": "This document.",
            "content": {
              "application/json": {
                "schema": {
                  "type": "object"
                }
              }
            }
          },
          "304": {
            "description": "Not modified: the If-None-Match named the current ETag."
          }
        }
      }
    }
  },
  "components": {
    "schemas": {
      "Error": {
        "type": "object",
        "required": [
          "error"
        ],
        "properties": {
          "error": {
            "type": "object",
            "required": [
              "code",
              "message"
            ],
            "properties": {
              "code": {
                "type": "string"
              },
              "message": {
                "type": "string"
              }
            }
          }
        }
      },
      "Message": {
        "type": "object",
        "required": [
          "message"
        ],
        "properties": {
          "message": {
            "type": "string"
          }
        }
      },
      "Session": {
        "type": "object",
        "required": [
          "csrfToken",
          "version",
          "cursor"
        ],
        "properties": {
          "csrfToken": {
            "type": "string"
          },
          "version": {
            "type": "string"
          },
          "cursor": {
            "type": "integer"
          }
        }
      },
      "AssetReport": {
        "type": "object",
        "required": [
          "id",
          "url",
          "state",
          "receivedBytes",
          "expectedBytes",
          "error",
          "unpack"
        ],
        "properties": {
          "id": {
            "type": "string"
          },
          "url": {
            "type": "string"
          },
          "state": {
            "type": "string",
            "enum": [
              "pending",
              "downloading",
              "downloaded",
              "unpacked",
              "failed"
            ]
          },
          "receivedBytes": {
            "type": "integer"
          },
          "expectedBytes": {
            "type": [
              "integer",
              "null"
            ]
          },
          "error": {
            "type": [
              "string",
              "null"
            ]
          },
          "fileName": {
            "type": "string"
          },
          "sha256": {
            "type": "string"
          },
          "unpack": {
            "type": "boolean"
          },
          "isArchive": {
            "type": "boolean"
          },
          "headers": {
            "type": "object",
            "additionalProperties": {
              "type": "string"
            }
          },
          "userInfo": {
            "type": "object",
            "additionalProperties": {
              "type": "string"
            }
          }
        }
      },
      "IssueReport": {
        "type": "object",
        "required": [
          "reportVersion",
          "name",
          "date",
          "status",
          "folder",
          "directory",
          "assetsDone",
          "assetsTotal",
          "bytes",
          "pinned",
          "assets",
          "version"
        ],
        "properties": {
          "reportVersion": {
            "type": "integer"
          },
          "name": {
            "type": "string"
          },
          "date": {
            "type": "string",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
          },
          "status": {
            "type": "string",
            "enum": [
              "none",
              "downloading",
              "available",
              "failed"
            ]
          },
          "folder": {
            "type": "string"
          },
          "file": {
            "type": "string",
            "description": "For an issue filed by a layout template: its file name before the extension, in the folder it shares with other issues."
          },
          "directory": {
            "type": "string"
          },
          "assetsDone": {
            "type": "integer",
            "minimum": 0
          },
          "assetsTotal": {
            "type": "integer",
            "minimum": 0
          },
          "bytes": {
            "type": "integer"
          },
          "pinned": {
            "type": "boolean"
          },
          "removing": {
            "type": "boolean"
          },
          "publication": {
            "type": "string"
          },
          "origin": {
            "type": "object",
            "required": [
              "subscription",
              "item",
              "matched"
            ],
            "properties": {
              "subscription": {
                "type": "string"
              },
              "item": {
                "type": "string"
              },
              "matched": {
                "type": "string",
                "enum": [
                  "id",
                  "enclosure",
                  "title-date"
                ]
              }
            }
          },
          "assets": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/AssetReport"
            }
          },
          "coverSource": {
            "$ref": "#/components/schemas/AssetReport"
          },
          "version": {
            "type": "integer"
          }
        }
      },
      "SubscriptionReport": {
        "type": "object",
        "required": [
          "reportVersion",
          "id",
          "name",
          "url",
          "previousURLs",
          "format",
          "mapped",
          "download",
          "keep",
          "paused",
          "gone",
          "issues",
          "issuesAdded",
          "itemsSeen",
          "lastChecked",
          "lastOutcome",
          "template"
        ],
        "properties": {
          "reportVersion": {
            "type": "integer"
          },
          "id": {
            "type": "string"
          },
          "name": {
            "type": "string"
          },
          "url": {
            "type": "string"
          },
          "previousURLs": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "format": {
            "type": [
              "string",
              "null"
            ]
          },
          "mapped": {
            "type": "boolean"
          },
          "download": {
            "type": "boolean"
          },
          "keep": {
            "type": [
              "integer",
              "null"
            ]
          },
          "paused": {
            "type": "boolean"
          },
          "gone": {
            "type": "boolean"
          },
          "issues": {
            "type": [
              "integer",
              "null"
            ]
          },
          "issuesAdded": {
            "type": "integer"
          },
          "itemsSeen": {
            "type": "integer"
          },
          "lastChecked": {
            "type": [
              "string",
              "null"
            ]
          },
          "lastOutcome": {
            "type": [
              "string",
              "null"
            ]
          },
          "template": {
            "type": [
              "string",
              "null"
            ],
            "description": "The layout template the subscription's new issues are filed by; null for the library's default."
          }
        }
      },
      "EventReport": {
        "type": "object",
        "required": [
          "reportVersion",
          "cursor",
          "id",
          "kind",
          "time"
        ],
        "properties": {
          "reportVersion": {
            "type": "integer"
          },
          "cursor": {
            "type": "integer"
          },
          "id": {
            "type": "string"
          },
          "kind": {
            "type": "string"
          },
          "time": {
            "type": "string"
          },
          "reason": {
            "type": "string"
          },
          "detail": {
            "type": "string"
          },
          "issue": {
            "$ref": "#/components/schemas/IssueReport"
          },
          "subscription": {
            "type": "object",
            "required": [
              "id",
              "name",
              "url"
            ],
            "properties": {
              "id": {
                "type": "string"
              },
              "name": {
                "type": "string"
              },
              "url": {
                "type": "string"
              }
            }
          }
        }
      },
      "IssueEntry": {
        "type": "object",
        "required": [
          "key",
          "read",
          "issue"
        ],
        "properties": {
          "key": {
            "type": "string"
          },
          "read": {
            "type": "boolean"
          },
          "issue": {
            "$ref": "#/components/schemas/IssueReport"
          }
        }
      },
      "IssueList": {
        "type": "object",
        "required": [
          "total",
          "offset",
          "limit",
          "cursor",
          "items"
        ],
        "properties": {
          "total": {
            "type": "integer",
            "minimum": 0
          },
          "offset": {
            "type": "integer",
            "minimum": 0
          },
          "limit": {
            "type": "integer",
            "minimum": 1
          },
          "cursor": {
            "type": "integer"
          },
          "items": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/IssueEntry"
            }
          },
          "removed": {
            "type": "array",
            "items": {
              "type": "string"
            }
          }
        }
      },
      "EventList": {
        "type": "object",
        "required": [
          "cursor",
          "events"
        ],
        "properties": {
          "cursor": {
            "type": "integer"
          },
          "events": {
            "type": "array",
            "items": {
              "$ref": "#/components/schemas/EventReport"
            }
          }
        }
      },
      "SubscribeResult": {
        "type": "object",
        "required": [
          "addedIssues",
          "message"
        ],
        "properties": {
          "subscription": {
            "$ref": "#/components/schemas/SubscriptionReport"
          },
          "addedIssues": {
            "type": "array",
            "items": {
              "type": "string"
            }
          },
          "message": {
            "type": "string"
          }
        }
      }
    },
    "responses": {
      "Error400": {
        "description": "A bad parameter or body.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      },
      "Error401": {
        "description": "The access token is missing (beyond loopback).",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      },
      "Error403": {
        "description": "A change without this server's Origin or CSRF token.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      },
      "Error404": {
        "description": "No such issue, subscription or path.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      },
      "Error409": {
        "description": "Already there.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      },
      "Error502": {
        "description": "The feed could not be fetched.",
        "content": {
          "application/json": {
            "schema": {
              "$ref": "#/components/schemas/Error"
            }
          }
        }
      }
    }
  }
}
"""#
}
