// Generated from GET /v1/openapi.json by `npm run generate:client` (openapi-typescript). Do not edit.
export interface paths {
    "/v1/openapi.json": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** This document (no key needed; any origin may read it). */
        get: operations["getOpenApi"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The account and the key making the request. */
        get: operations["getMe"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The catalog (one page). */
        get: operations["listModels"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/models/detail": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One model, with its inputs as a JSON Schema. */
        get: operations["getModel"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/quote": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** The price of a render; nothing is charged. */
        post: operations["createQuote"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/generations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The account's generations, newest first. */
        get: operations["listGenerations"];
        put?: never;
        /**
         * Start a render: priced, charged and queued in one step.
         * @description Checks run in this order, the first that fails answers: auth (401) → rate limit (429) → Idempotency-Key (400) → body and inputs (400) → idempotency replay or conflict (202 replay / 409 / 422) → balance (402) → daily cap (409) → charge.
         */
        post: operations["createGeneration"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/generations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One generation. */
        get: operations["getGeneration"];
        put?: never;
        post?: never;
        /** Delete a generation and its file; a queued one is cancelled first and refunded. */
        delete: operations["deleteGeneration"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/generations/{id}/cancel": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Cancel a queued generation: it becomes refunded; the record stays. */
        post: operations["cancelGeneration"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/generations/{id}/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A render's live events (server-sent events) until its final status.
         * @description At once an `event: generation` with the generation as GET answers it, then one at each change of its status, start or progress; each has an increasing `id`, and `data` is the Generation JSON. The stream ends after the final status. `Last-Event-ID` resumes: the current state comes first when anything was missed. A comment line every 15 s keeps it open. Past its share of streams (a tenth of the process's `RENDERGATE_MAX_WAITERS`) an account is answered 429.
         */
        get: operations["streamGenerationEvents"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/generations/{id}/content": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The output file; single byte ranges. */
        get: operations["getGenerationContent"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/uploads": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The account's live uploads (not deleted, not expired), newest first. */
        get: operations["listUploads"];
        put?: never;
        /**
         * Upload an image to use as a `url` input.
         * @description Live uploads of an account (not deleted, not expired) are bounded in bytes and number; past either, 409 `UPLOAD_QUOTA_EXCEEDED` with the usage and the quota in `details`.
         */
        post: operations["createUpload"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/uploads/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The uploaded bytes, with the upload's Content-Type. */
        get: operations["getUpload"];
        put?: never;
        post?: never;
        /** Remove an upload. */
        delete: operations["deleteUpload"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhook-endpoints": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The account's endpoints of the key's mode, without secrets. */
        get: operations["listWebhookEndpoints"];
        put?: never;
        /** Add an endpoint of the key's mode (at most 10 live and 10 test endpoints per account). */
        post: operations["createWebhookEndpoint"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhook-endpoints/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One endpoint, with its secret. */
        get: operations["getWebhookEndpoint"];
        put?: never;
        post?: never;
        /** Remove an endpoint. */
        delete: operations["deleteWebhookEndpoint"];
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/webhooks/stripe": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Stripe's events for Checkout top-ups (only when Stripe is configured; else 404).
         * @description Verified with the `Stripe-Signature` header over the raw body (300 s tolerance); a body over 64 KiB is a 413, and each address has a budget of requests, taken before the signature is checked (429 past it). A paid `checkout.session.completed` or `checkout.session.async_payment_succeeded` of a session this service created credits the amount it was created with, once; refunds, disputes and a failed payment of a top-up take it back (ledger kind `reversal`), whatever their order (an early one is `kept` and applied with the credit), and a won dispute gives its part back once (`reinstated`). A signed event of an unexpected shape is a 400. Other events change nothing. Answered only once the change is committed. See docs/billing.md.
         */
        post: operations["receiveStripeEvent"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhook-endpoints/{id}/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Deliveries to one endpoint, newest first. */
        get: operations["listWebhookDeliveries"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Renders and spend over a range of days, grouped by day, model, key or member.
         * @description Counts the renders created within the range (days in the server's day time zone, both ends included, at most 366) in the key's mode: a test key sees its account's test renders. `spentCents` is what they were charged less what was returned (a test render's price). Groups without renders are left out; without `groupBy`, one row holds the totals.
         */
        get: operations["getUsage"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openai/v1/models": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The catalog's text models, as OpenAI's model list. */
        get: operations["openaiListModels"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openai/v1/models/{vendor}/{name}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One text model. */
        get: operations["openaiGetModel"];
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openai/v1/responses": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A render of a text model through the Responses API, priced and charged like POST /v1/generations, answered when final (within 60 s).
         * @description An `Idempotency-Key` is honoured (one is made when absent): send one per request and keep it across retries to be charged once.
         */
        post: operations["openaiCreateResponse"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/openai/v1/chat/completions": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * A render of a text model, priced and charged like POST /v1/generations, answered when final (within 60 s).
         * @description An `Idempotency-Key` is honoured (one is made when absent): send one per request and keep it across retries to be charged once.
         */
        post: operations["openaiCreateChatCompletion"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface webhooks {
    "generation.started": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Sent when a generation started. */
        post: operations["event.generation.started"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "generation.succeeded": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Sent when a generation succeeded. */
        post: operations["event.generation.succeeded"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "generation.failed": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Sent when a generation failed. */
        post: operations["event.generation.failed"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "generation.refunded": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Sent when a generation refunded. */
        post: operations["event.generation.refunded"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "account.balance_low": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Sent when a change takes the balance below the low-balance alert. */
        post: operations["event.account.balance_low"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "budget.threshold_reached": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Sent when a budget reaches 80 % or 100 % of its limit (once per period each). */
        post: operations["event.budget.threshold_reached"];
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export interface components {
    schemas: {
        /** @description One input of a model. */
        Field: {
            name: string;
            /** @enum {unknown} */
            type: "text" | "url" | "number" | "toggle" | "enum";
            required: boolean;
            /** @description null: no default (the field stays absent when omitted). */
            default: string | number | boolean | null;
            description?: string;
            /**
             * @description For url fields: what the address points at.
             * @enum {unknown}
             */
            media?: "image";
            /** @description enum: allowed values, in order. */
            values?: (string | number)[];
            minimum?: number;
            maximum?: number;
            integer?: boolean;
            maxLength?: number;
        };
        Model: {
            /** @example rendergate/image-to-video */
            id: string;
            name: string;
            /** @enum {unknown} */
            kind: "video" | "image" | "text";
            description: string;
            output: {
                /** @constant */
                type: "file";
                contentType: string;
            } | {
                /** @constant */
                type: "text";
            };
            fields: components["schemas"]["Field"][];
        };
        ModelDetail: {
            /** @example rendergate/image-to-video */
            id: string;
            name: string;
            /** @enum {unknown} */
            kind: "video" | "image" | "text";
            description: string;
            output: {
                /** @constant */
                type: "file";
                contentType: string;
            } | {
                /** @constant */
                type: "text";
            };
            fields: components["schemas"]["Field"][];
            /** @description The model's `inputs` as a JSON Schema (2020-12), derived from its fields. */
            inputSchema: Record<string, never>;
        };
        /** @description A page, newest first. Pass `nextCursor` as `cursor` for the next one; null on the last page. */
        ModelList: {
            data: components["schemas"]["Model"][];
            nextCursor: string | null;
        };
        Budget: {
            /** @enum {unknown} */
            period: "day" | "week" | "month" | "total";
            limitCents: number;
            /** @description Charged less refunded in the current period. */
            spentCents: number;
            /**
             * Format: date-time
             * @description When the period ends; null for `total`.
             */
            resetsAt: string | null;
        };
        Me: {
            budgets: {
                account: components["schemas"]["Budget"][];
                key: components["schemas"]["Budget"][];
            };
            accountId: string;
            balanceCents: number;
            /** @constant */
            currency: "EUR";
            key: {
                id: string;
                name: string | null;
                start: string;
                /** Format: date-time */
                createdAt: string;
                dailyCapCents: number | null;
                spentTodayCents: number;
                rateLimitPerMinute: number;
                /**
                 * @description A test key (`rg_test_…`) renders for free, with results made by the service itself.
                 * @enum {unknown}
                 */
                mode: "live" | "test";
                /** @description Who created the key: a member (by email) or the operator. */
                createdBy: {
                    /** @constant */
                    type: "member";
                    email: string;
                } | {
                    /** @constant */
                    type: "operator";
                };
            };
        };
        Quote: {
            modelId: string;
            inputs: components["schemas"]["ResolvedInputs"];
            costCents: number;
            /** @constant */
            currency: "EUR";
        };
        /** @description The inputs with defaults applied: what is priced, stored and echoed back. */
        ResolvedInputs: {
            [key: string]: string | number | boolean;
        };
        /**
         * @description `queued` covers waiting and running (`startedAt` set once it runs); the others are final.
         * @enum {unknown}
         */
        GenerationStatus: "queued" | "succeeded" | "failed" | "refunded";
        Generation: {
            /** @example gen_0190f6f1c2a87c3e9a4e5b6d7c8e9f01 */
            id: string;
            modelId: string;
            inputs: components["schemas"]["ResolvedInputs"];
            status: components["schemas"]["GenerationStatus"];
            costCents: number;
            /** @description 0, or costCents once the charge was returned (failed, refunded). */
            refundedCents: number;
            /**
             * Format: uri
             * @description Succeeded file output: `{PUBLIC_URL}/v1/generations/{id}/content`.
             */
            contentUrl?: string;
            /** @description With contentUrl, e.g. `video/mp4`. */
            contentType?: string;
            /** @description Succeeded text output. */
            textOutput?: string;
            /** @description Why it failed or was refunded. */
            error?: {
                code: string;
                message: string;
            };
            /** @description 0..1 while running when the renderer reports it; 1 when succeeded; else null. */
            progress: number | null;
            /** @description While waiting to start: 1 = next of its model; null once started or final. */
            queuePosition: number | null;
            /**
             * Format: date-time
             * @description When its file will be removed; null if kept forever or no file.
             */
            expiresAt: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            startedAt: string | null;
            /** Format: date-time */
            completedAt: string | null;
            /**
             * @description Present on renders of test keys only: nothing was charged; `costCents` is the price it would cost.
             * @constant
             */
            mode?: "test";
        };
        /** @description A page, newest first. Pass `nextCursor` as `cursor` for the next one; null on the last page. */
        GenerationList: {
            data: components["schemas"]["Generation"][];
            nextCursor: string | null;
        };
        /** @description A model and its inputs: one variant per model of the catalog. */
        RenderRequest: {
            /** @constant */
            modelId: "rendergate/start-end-to-video";
            inputs: components["schemas"]["Inputs.rendergate.start-end-to-video"];
        } | {
            /** @constant */
            modelId: "rendergate/image-to-video";
            inputs: components["schemas"]["Inputs.rendergate.image-to-video"];
        } | {
            /** @constant */
            modelId: "rendergate/shot-list";
            inputs: components["schemas"]["Inputs.rendergate.shot-list"];
        };
        Deleted: {
            id: string;
            /** @constant */
            deleted: true;
        };
        Upload: {
            /** @example upl_0190f6f1c2a87c3e9a4e5b6d7c8e9f01 */
            id: string;
            /**
             * Format: uri
             * @description `{PUBLIC_URL}/v1/uploads/{id}`: use it as any `url` input with `media: "image"`.
             */
            url: string;
            /** @enum {unknown} */
            contentType: "image/png" | "image/jpeg" | "image/webp";
            sizeBytes: number;
            width: number;
            height: number;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            expiresAt: string;
        };
        /** @enum {unknown} */
        EventType: "generation.started" | "generation.succeeded" | "generation.failed" | "generation.refunded" | "account.balance_low" | "budget.threshold_reached";
        WebhookEndpointCreate: {
            /** Format: uri */
            url: string;
            /** @description Every type when omitted. */
            events?: components["schemas"]["EventType"][];
        };
        WebhookEndpoint: {
            /** @example whe_0190f6f1c2a87c3e9a4e5b6d7c8e9f01 */
            id: string;
            /** Format: uri */
            url: string;
            events: components["schemas"]["EventType"][];
            /** @description Signing secret (Standard Webhooks); on create and on GET of one endpoint, never in lists. */
            secret?: string;
            /** @description false once a delivery was answered 410. */
            enabled: boolean;
            /**
             * @description The key's mode that made it (or the one chosen in the studio). A test endpoint receives only test renders' events (`livemode: false`), a live one only live renders'. A key sees and deletes only endpoints of its own mode: another mode's is 404 `WEBHOOK_ENDPOINT_NOT_FOUND`.
             * @enum {unknown}
             */
            mode: "live" | "test";
            /** Format: date-time */
            createdAt: string;
        };
        /** @description A page, newest first. Pass `nextCursor` as `cursor` for the next one; null on the last page. */
        WebhookEndpointList: {
            data: components["schemas"]["WebhookEndpoint"][];
            nextCursor: string | null;
        };
        /** @description A page, newest first. Pass `nextCursor` as `cursor` for the next one; null on the last page. */
        UploadList: {
            data: components["schemas"]["Upload"][];
            nextCursor: string | null;
        };
        WebhookDelivery: {
            id: string;
            eventId: string;
            type: components["schemas"]["EventType"];
            /** @description null for an account's event. */
            generationId: string | null;
            attempts: number;
            /** @enum {unknown} */
            status: "pending" | "delivered" | "failed";
            lastResponseStatus: number | null;
            /** @description One sentence on the last failed attempt ("HTTP 500", "no answer within 15 s", "address refused: 127.0.0.1 is a loopback address"); null when none failed. */
            lastError: string | null;
            /** Format: date-time */
            createdAt: string;
            /** Format: date-time */
            nextAttemptAt: string | null;
        };
        /** @description A page, newest first. Pass `nextCursor` as `cursor` for the next one; null on the last page. */
        WebhookDeliveryList: {
            data: components["schemas"]["WebhookDelivery"][];
            nextCursor: string | null;
        };
        /** @description One group: the fields it is grouped by, then its numbers. */
        UsageEntry: {
            /**
             * Format: date
             * @description With `groupBy` day: the day (YYYY-MM-DD).
             */
            day?: string;
            /** @description With `groupBy` model. */
            modelId?: string;
            /** @description With `groupBy` key; null: started in the studio. */
            keyId?: string | null;
            /** @description With `groupBy` member: the email of who started the renders in the studio; null for a key's renders. */
            member?: string | null;
            /** @description Renders created, whatever became of them. */
            renders: number;
            /** @description Charged less returned (a test render: its price). */
            spentCents: number;
        };
        Usage: {
            /** Format: date */
            from: string;
            /** Format: date */
            to: string;
            data: components["schemas"]["UsageEntry"][];
        };
        BalanceLowEvent: {
            accountId: string;
            balanceCents: number;
            thresholdCents: number;
        };
        BudgetThresholdEvent: {
            /** @enum {unknown} */
            scope: "account" | "member" | "key";
            id: string;
            /** @enum {unknown} */
            period: "day" | "week" | "month" | "total";
            limitCents: number;
            spentCents: number;
            /** @enum {unknown} */
            percent: 80 | 100;
        };
        /** @description An account's alert, sent as the POST body and signed as every event is. */
        AlertEvent: {
            /** @enum {unknown} */
            type: "account.balance_low" | "budget.threshold_reached";
            /** Format: date-time */
            timestamp: string;
            /** @description false for a test key's budget. */
            livemode: boolean;
            data: components["schemas"]["BalanceLowEvent"] | components["schemas"]["BudgetThresholdEvent"];
        };
        /** @description Sent as the POST body, signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`). */
        WebhookEvent: {
            /** @enum {unknown} */
            type: "generation.started" | "generation.succeeded" | "generation.failed" | "generation.refunded";
            /** Format: date-time */
            timestamp: string;
            /** @description false for the renders of test keys. */
            livemode: boolean;
            data: components["schemas"]["Generation"];
        };
        /** Inputs of rendergate/start-end-to-video */
        "Inputs.rendergate.start-end-to-video": {
            /** @description What happens between the two frames. */
            prompt: string;
            /**
             * Format: uri
             * @description The first frame: a PNG, JPEG or WebP image.
             */
            image: string;
            /**
             * Format: uri
             * @description The last frame: a PNG, JPEG or WebP image.
             */
            last_image: string;
            /**
             * @description Length of the video in seconds.
             * @default 5
             */
            duration?: number;
            /**
             * @description Height of the video in pixels (16:9).
             * @default 720p
             * @enum {unknown}
             */
            resolution?: "540p" | "720p" | "1080p";
            /**
             * @description Add a background music track.
             * @default true
             */
            bgm?: boolean;
            /**
             * @description How strongly the camera and subject move.
             * @default auto
             * @enum {unknown}
             */
            movement_amplitude?: "auto" | "small" | "medium" | "large";
            /** @description Fixes the randomness; the same seed and inputs give the same video. */
            seed?: number;
        };
        /** Inputs of rendergate/image-to-video */
        "Inputs.rendergate.image-to-video": {
            /** @description What the video shows and how the camera moves. */
            prompt: string;
            /**
             * Format: uri
             * @description The still image to animate: a PNG, JPEG or WebP image.
             */
            image: string;
            /** @description What the video should avoid. */
            negative_prompt?: string;
            /**
             * @description How closely the video follows the prompt (0 = loosely, 1 = strictly).
             * @default 0.5
             */
            guidance_scale?: number;
            /**
             * @description Length of the video in seconds.
             * @default 5
             * @enum {unknown}
             */
            duration?: 5 | 10;
        };
        /** Inputs of rendergate/shot-list */
        "Inputs.rendergate.shot-list": {
            /** @description The script or description to work on. */
            text: string;
            /**
             * @description What to answer with.
             * @default summary
             * @enum {unknown}
             */
            mode?: "summary" | "keywords" | "shot_list";
            /**
             * @description Most sentences, keywords or shots in the answer.
             * @default 5
             */
            max_items?: number;
        };
        FieldProblem: {
            /** @example inputs.duration */
            field: string;
            message: string;
        };
        BalanceProblem: {
            costCents: number;
            balanceCents: number;
        };
        DailyCapProblem: {
            capCents: number;
            spentTodayCents: number;
            costCents: number;
            /** Format: date-time */
            resetsAt: string;
        };
        /** @description One budget the charge would exceed (409 BUDGET_EXCEEDED). */
        BudgetProblem: {
            /** @enum {unknown} */
            scope: "account" | "member" | "key";
            id: string;
            /** @enum {unknown} */
            period: "day" | "week" | "month" | "total";
            limitCents: number;
            spentCents: number;
            costCents: number;
            /** Format: date-time */
            resetsAt: string | null;
        };
        UploadQuotaProblem: {
            usedBytes: number;
            quotaBytes: number;
            count: number;
            quotaCount: number;
        };
        StatusProblem: {
            status: components["schemas"]["GenerationStatus"];
        };
        /** @enum {string} */
        ErrorCode: "ACCOUNT_NOT_FOUND" | "ADMIN_TOKEN_INVALID" | "API_KEY_DAILY_CAP" | "API_KEY_INVALID" | "API_KEY_MISSING" | "API_KEY_REVOKED" | "BUDGET_EXCEEDED" | "CONTENT_EXPIRED" | "CONTENT_NOT_FOUND" | "FORBIDDEN" | "GENERATION_NOT_CANCELLABLE" | "GENERATION_NOT_FOUND" | "GENERATION_NOT_READY" | "GENERATION_NOT_REFUNDABLE" | "HEADERS_TOO_LARGE" | "IDEMPOTENCY_KEY_IN_USE" | "IDEMPOTENCY_KEY_REQUIRED" | "IDEMPOTENCY_KEY_REUSED" | "INSUFFICIENT_BALANCE" | "INSUFFICIENT_STORAGE" | "INTERNAL_ERROR" | "INVALID_INPUT" | "INVALID_REQUEST" | "KEY_NOT_FOUND" | "LAST_OWNER" | "METHOD_NOT_ALLOWED" | "MODEL_NOT_FOUND" | "NOT_FOUND" | "PAYLOAD_TOO_LARGE" | "PRECONDITION_FAILED" | "RANGE_NOT_SATISFIABLE" | "RATE_LIMITED" | "REQUEST_TIMEOUT" | "SERVICE_UNAVAILABLE" | "UNSUPPORTED_MEDIA_TYPE" | "UPLOAD_NOT_FOUND" | "UPLOAD_QUOTA_EXCEEDED" | "WEBHOOK_ENDPOINT_LIMIT" | "WEBHOOK_ENDPOINT_NOT_FOUND";
        /** @description Every error. `message` is one human sentence; `code` is from the closed list. */
        Error: {
            code: components["schemas"]["ErrorCode"];
            message: string;
            details?: (components["schemas"]["FieldProblem"] | components["schemas"]["BalanceProblem"] | components["schemas"]["DailyCapProblem"] | components["schemas"]["BudgetProblem"] | components["schemas"]["StatusProblem"] | components["schemas"]["UploadQuotaProblem"])[];
            requestId: string;
        };
        Error400: {
            /** @enum {unknown} */
            code?: "IDEMPOTENCY_KEY_REQUIRED" | "INVALID_INPUT" | "INVALID_REQUEST";
        } & components["schemas"]["Error"];
        Error401: {
            /** @enum {unknown} */
            code?: "ADMIN_TOKEN_INVALID" | "API_KEY_INVALID" | "API_KEY_MISSING" | "API_KEY_REVOKED";
        } & components["schemas"]["Error"];
        Error402: {
            /** @enum {unknown} */
            code?: "INSUFFICIENT_BALANCE";
        } & components["schemas"]["Error"];
        Error403: {
            /** @enum {unknown} */
            code?: "FORBIDDEN";
        } & components["schemas"]["Error"];
        Error404: {
            /** @enum {unknown} */
            code?: "ACCOUNT_NOT_FOUND" | "CONTENT_NOT_FOUND" | "GENERATION_NOT_FOUND" | "KEY_NOT_FOUND" | "MODEL_NOT_FOUND" | "NOT_FOUND" | "UPLOAD_NOT_FOUND" | "WEBHOOK_ENDPOINT_NOT_FOUND";
        } & components["schemas"]["Error"];
        Error405: {
            /** @enum {unknown} */
            code?: "METHOD_NOT_ALLOWED";
        } & components["schemas"]["Error"];
        Error408: {
            /** @enum {unknown} */
            code?: "REQUEST_TIMEOUT";
        } & components["schemas"]["Error"];
        Error409: {
            /** @enum {unknown} */
            code?: "API_KEY_DAILY_CAP" | "BUDGET_EXCEEDED" | "GENERATION_NOT_CANCELLABLE" | "GENERATION_NOT_READY" | "GENERATION_NOT_REFUNDABLE" | "IDEMPOTENCY_KEY_IN_USE" | "LAST_OWNER" | "UPLOAD_QUOTA_EXCEEDED" | "WEBHOOK_ENDPOINT_LIMIT";
        } & components["schemas"]["Error"];
        Error410: {
            /** @enum {unknown} */
            code?: "CONTENT_EXPIRED";
        } & components["schemas"]["Error"];
        Error412: {
            /** @enum {unknown} */
            code?: "PRECONDITION_FAILED";
        } & components["schemas"]["Error"];
        Error413: {
            /** @enum {unknown} */
            code?: "PAYLOAD_TOO_LARGE";
        } & components["schemas"]["Error"];
        Error415: {
            /** @enum {unknown} */
            code?: "UNSUPPORTED_MEDIA_TYPE";
        } & components["schemas"]["Error"];
        Error416: {
            /** @enum {unknown} */
            code?: "RANGE_NOT_SATISFIABLE";
        } & components["schemas"]["Error"];
        Error422: {
            /** @enum {unknown} */
            code?: "IDEMPOTENCY_KEY_REUSED";
        } & components["schemas"]["Error"];
        Error429: {
            /** @enum {unknown} */
            code?: "RATE_LIMITED";
        } & components["schemas"]["Error"];
        Error431: {
            /** @enum {unknown} */
            code?: "HEADERS_TOO_LARGE";
        } & components["schemas"]["Error"];
        Error500: {
            /** @enum {unknown} */
            code?: "INTERNAL_ERROR";
        } & components["schemas"]["Error"];
        Error503: {
            /** @enum {unknown} */
            code?: "SERVICE_UNAVAILABLE";
        } & components["schemas"]["Error"];
        Error507: {
            /** @enum {unknown} */
            code?: "INSUFFICIENT_STORAGE";
        } & components["schemas"]["Error"];
        /** @description OpenAI's error body; `code` is the v1 error code. */
        OpenAIError: {
            error: {
                message: string;
                /** @example invalid_request_error */
                type: string;
                /** @example messages */
                param: string | null;
                /** @example INVALID_INPUT */
                code: string;
            };
        };
        OpenAIModel: {
            id: string;
            /** @constant */
            object: "model";
            created: number;
            owned_by: string;
        };
        OpenAIModelList: {
            /** @constant */
            object: "list";
            data: components["schemas"]["OpenAIModel"][];
        };
        ChatMessage: {
            /** @enum {unknown} */
            role: "system" | "developer" | "user" | "assistant";
            content?: string | {
                /** @constant */
                type: "text";
                text: string;
            }[] | null;
        };
        /** @description OpenAI's chat request. The last user message's text becomes the model's `openai.input` field; a `driver: openai` model gets the messages as they are, after the catalog's system messages, and every message's text counts against that field's limits and in its price. Parameters that would change the answer and that the model cannot honour are refused (400 naming the parameter): `n` > 1, tools, images, `logprobs`, audio `modalities`, `response_format` other than `text` (a `driver: openai` model takes `json_object` and `json_schema`, passed to its server). Other OpenAI parameters are accepted and not used. */
        ChatCompletionRequest: {
            /** @example rendergate/shot-list */
            model: string;
            messages: components["schemas"]["ChatMessage"][];
            stream?: boolean | null;
            max_tokens?: number | null;
            /** @constant */
            n?: 1;
            response_format?: Record<string, never> | null;
            stream_options?: {
                include_usage?: boolean;
            } | null;
        };
        /** @description The render behind the answer and what it was charged. */
        RendergateUsage: {
            generationId: string;
            costCents: number;
        };
        /** @description Tokens: the backend's own counts where it reports them, otherwise counted with OpenAI's `o200k_base` encoding. */
        ChatUsage: {
            prompt_tokens: number;
            completion_tokens: number;
            total_tokens: number;
            rendergate: components["schemas"]["RendergateUsage"];
        };
        ChatCompletion: {
            /** @description The generation's id (`/v1/generations/{id}`). */
            id: string;
            /** @constant */
            object: "chat.completion";
            usage: components["schemas"]["ChatUsage"];
            created: number;
            model: string;
            choices: {
                /** @constant */
                index: 0;
                /** @constant */
                finish_reason: "stop";
                logprobs?: null;
                message: {
                    /** @constant */
                    role: "assistant";
                    /** @description The generation's `textOutput`. */
                    content: string;
                    refusal?: null;
                };
            }[];
        };
        /** @description OpenAI's Responses request: `input` a string or a list of messages, `instructions` a system message in front. Refused (400 naming the parameter): tools, `previous_response_id` and stored conversations, log-probabilities, `text.format` other than `text` (a `driver: openai` model takes JSON formats, passed to its server). Other parameters are accepted and not used. */
        ResponseRequest: {
            /** @example rendergate/shot-list */
            model: string;
            input: string | components["schemas"]["ChatMessage"][];
            instructions?: string | null;
            stream?: boolean | null;
            text?: Record<string, never> | null;
        };
        /** @description Tokens: the backend's own counts where it reports them, otherwise counted with OpenAI's `o200k_base` encoding. */
        ResponseUsage: {
            input_tokens: number;
            input_tokens_details?: Record<string, never>;
            output_tokens: number;
            output_tokens_details?: Record<string, never>;
            total_tokens: number;
            rendergate: components["schemas"]["RendergateUsage"];
        };
        Response: {
            /** @description The generation's id (`/v1/generations/{id}`). */
            id: string;
            /** @constant */
            object: "response";
            created_at: number;
            /** @constant */
            status: "completed";
            model: string;
            /** @description The generation's `textOutput`. */
            output_text?: string;
            output: {
                id: string;
                /** @constant */
                type: "message";
                /** @constant */
                role: "assistant";
                /** @constant */
                status: "completed";
                content: {
                    /** @constant */
                    type: "output_text";
                    text: string;
                }[];
            }[];
            usage: components["schemas"]["ResponseUsage"];
        };
    };
    responses: {
        /** @description The request is malformed or a value is invalid. Codes: `IDEMPOTENCY_KEY_REQUIRED`, `INVALID_INPUT`, `INVALID_REQUEST`. */
        Error400: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error400"];
            };
        };
        /** @description No valid API key. Codes: `ADMIN_TOKEN_INVALID`, `API_KEY_INVALID`, `API_KEY_MISSING`, `API_KEY_REVOKED`. */
        Error401: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                /** @description RFC 6750: `Bearer realm="rendergate"`, with `error="invalid_token"` when a key was sent. */
                "WWW-Authenticate": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error401"];
            };
        };
        /** @description The balance is below the price. Codes: `INSUFFICIENT_BALANCE`. */
        Error402: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error402"];
            };
        };
        /** @description The caller is known, but its role or mode may not do this (a test key on a live thing); the message names what is missing. Codes: `FORBIDDEN`. */
        Error403: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error403"];
            };
        };
        /** @description Nothing of that kind with that id for this account. Codes: `ACCOUNT_NOT_FOUND`, `CONTENT_NOT_FOUND`, `GENERATION_NOT_FOUND`, `KEY_NOT_FOUND`, `MODEL_NOT_FOUND`, `NOT_FOUND`, `UPLOAD_NOT_FOUND`, `WEBHOOK_ENDPOINT_NOT_FOUND`. */
        Error404: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error404"];
            };
        };
        /** @description The path does not serve this method; `Allow` lists the methods it does. Codes: `METHOD_NOT_ALLOWED`. */
        Error405: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                /** @example GET, HEAD */
                Allow: string;
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error405"];
            };
        };
        /** @description The request did not arrive within the request timeout. Codes: `REQUEST_TIMEOUT`. */
        Error408: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error408"];
            };
        };
        /** @description The request conflicts with the current state. Codes: `API_KEY_DAILY_CAP`, `BUDGET_EXCEEDED`, `GENERATION_NOT_CANCELLABLE`, `GENERATION_NOT_READY`, `GENERATION_NOT_REFUNDABLE`, `IDEMPOTENCY_KEY_IN_USE`, `LAST_OWNER`, `UPLOAD_QUOTA_EXCEEDED`, `WEBHOOK_ENDPOINT_LIMIT`. */
        Error409: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error409"];
            };
        };
        /** @description The file was removed after its expiresAt. Codes: `CONTENT_EXPIRED`. */
        Error410: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error410"];
            };
        };
        /** @description `If-Match` names no current ETag of the file. Codes: `PRECONDITION_FAILED`. */
        Error412: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error412"];
            };
        };
        /** @description The body is over the limit. Codes: `PAYLOAD_TOO_LARGE`. */
        Error413: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error413"];
            };
        };
        /** @description The body has a Content-Type this operation does not take. Codes: `UNSUPPORTED_MEDIA_TYPE`. */
        Error415: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error415"];
            };
        };
        /** @description The Range is wholly outside the file. Codes: `RANGE_NOT_SATISFIABLE`. */
        Error416: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                /** @description `bytes *\/<size>` */
                "Content-Range"?: string;
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error416"];
            };
        };
        /** @description The Idempotency-Key was used before with a different body. Codes: `IDEMPOTENCY_KEY_REUSED`. */
        Error422: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error422"];
            };
        };
        /** @description Too many requests on this key; retry after Retry-After seconds. Codes: `RATE_LIMITED`. */
        Error429: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "Retry-After": components["headers"]["Retry-After"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error429"];
            };
        };
        /** @description The request headers are over the limit. Codes: `HEADERS_TOO_LARGE`. */
        Error431: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error431"];
            };
        };
        /** @description A bug; logged with the request id. Codes: `INTERNAL_ERROR`. */
        Error500: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error500"];
            };
        };
        /** @description The database or storage is unreachable; retry after Retry-After seconds. Codes: `SERVICE_UNAVAILABLE`. */
        Error503: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "Retry-After": components["headers"]["Retry-After"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error503"];
            };
        };
        /** @description The storage is full; nothing was stored. Retry later. Codes: `INSUFFICIENT_STORAGE`. */
        Error507: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["Error507"];
            };
        };
        /** @description The request is malformed or names a parameter the model cannot take (`param`); or the render failed or was refunded while the request waited (`type` `server_error`, `code` the generation's error code such as `MODEL_FAILED`; its charge was returned). 400 because no OpenAI client library retries it at its default settings, and the same request would make a new render. */
        OpenAIError400: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                /** @description On a failed render: OpenAI's SDKs do not retry it. */
                "X-Should-Retry"?: "false";
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OpenAIError"];
            };
        };
        /** @description No valid API key. */
        OpenAIError401: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                /** @description RFC 6750: `Bearer realm="rendergate"`. */
                "WWW-Authenticate": string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OpenAIError"];
            };
        };
        /** @description The balance is below the price (`INSUFFICIENT_BALANCE`). */
        OpenAIError402: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OpenAIError"];
            };
        };
        /** @description The key may not do this (`FORBIDDEN`); the message names what is missing. */
        OpenAIError403: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OpenAIError"];
            };
        };
        /** @description No such model (`MODEL_NOT_FOUND`) or route. */
        OpenAIError404: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OpenAIError"];
            };
        };
        /** @description The path does not serve this method; `Allow` lists those it does. */
        OpenAIError405: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                Allow: string;
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OpenAIError"];
            };
        };
        /** @description The render was not final within 60 s (send the same Idempotency-Key again to keep waiting). */
        OpenAIError408: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OpenAIError"];
            };
        };
        /** @description Daily cap reached, or the Idempotency-Key is in use. */
        OpenAIError409: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OpenAIError"];
            };
        };
        /** @description The body is over the limit. */
        OpenAIError413: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OpenAIError"];
            };
        };
        /** @description The body is not JSON. */
        OpenAIError415: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OpenAIError"];
            };
        };
        /** @description The Idempotency-Key was used before with a different body. */
        OpenAIError422: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OpenAIError"];
            };
        };
        /** @description Too many requests on this key. */
        OpenAIError429: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                "Retry-After": components["headers"]["Retry-After"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OpenAIError"];
            };
        };
        /** @description A bug (`INTERNAL_ERROR`). */
        OpenAIError500: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                RateLimit: components["headers"]["RateLimit"];
                "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OpenAIError"];
            };
        };
        /** @description The database is unreachable. */
        OpenAIError503: {
            headers: {
                "X-Request-Id": components["headers"]["X-Request-Id"];
                "Retry-After": components["headers"]["Retry-After"];
                [name: string]: unknown;
            };
            content: {
                "application/json": components["schemas"]["OpenAIError"];
            };
        };
    };
    parameters: {
        limit: number;
        /** @description The previous page's `nextCursor`. */
        cursor: string;
        /** @description Replaying the same key with the same body returns the original answer and charges nothing. Kept ≥ 24 h per account. */
        "Idempotency-Key": string;
        /**
         * @description `wait=N` (1-60): hold the answer until the generation is final or N seconds passed (RFC 7240; other preferences are ignored).
         * @example wait=30
         */
        Prefer: string;
    };
    requestBodies: never;
    headers: {
        /** @description Echoed when the client sent one of ≤ 128 safe characters. */
        "X-Request-Id": string;
        /** @description Remaining requests and seconds to the window's reset. */
        RateLimit: string;
        /** @description The key's limit per minute. */
        "RateLimit-Policy": string;
        /** @description Seconds to wait before retrying. */
        "Retry-After": string;
        /** @description Set when a `Prefer: wait=N` was honoured. */
        "Preference-Applied": string;
    };
    pathItems: never;
}
export type $defs = Record<string, never>;
export interface operations {
    getOpenApi: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The OpenAPI 3.1 document. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    "Access-Control-Allow-Origin": "*";
                    [name: string]: unknown;
                };
                content: {
                    "application/json": Record<string, never>;
                };
            };
            400: components["responses"]["Error400"];
            408: components["responses"]["Error408"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
        };
    };
    getMe: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The account and key. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Me"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            408: components["responses"]["Error408"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    listModels: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Every model. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ModelList"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            408: components["responses"]["Error408"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    getModel: {
        parameters: {
            query: {
                /** @example rendergate/image-to-video */
                id: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The model. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ModelDetail"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            408: components["responses"]["Error408"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    createQuote: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RenderRequest"];
            };
        };
        responses: {
            /** @description The resolved inputs and their price. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Quote"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            408: components["responses"]["Error408"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    listGenerations: {
        parameters: {
            query?: {
                limit?: components["parameters"]["limit"];
                /** @description The previous page's `nextCursor`. */
                cursor?: components["parameters"]["cursor"];
                status?: components["schemas"]["GenerationStatus"];
                modelId?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of generations. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["GenerationList"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            408: components["responses"]["Error408"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    createGeneration: {
        parameters: {
            query?: never;
            header: {
                /** @description Replaying the same key with the same body returns the original answer and charges nothing. Kept ≥ 24 h per account. */
                "Idempotency-Key": components["parameters"]["Idempotency-Key"];
                /**
                 * @description `wait=N` (1-60): hold the answer until the generation is final or N seconds passed (RFC 7240; other preferences are ignored).
                 * @example wait=30
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["RenderRequest"];
            };
        };
        responses: {
            /** @description Created (or replayed): the generation. */
            202: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    /** @description The generation's URL. */
                    Location: string;
                    /** @description `true` when this is the answer to an earlier request with the same key. */
                    "Idempotent-Replayed"?: "true";
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Generation"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            402: components["responses"]["Error402"];
            403: components["responses"]["Error403"];
            408: components["responses"]["Error408"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            422: components["responses"]["Error422"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    getGeneration: {
        parameters: {
            query?: never;
            header?: {
                /**
                 * @description `wait=N` (1-60): hold the answer until the generation is final or N seconds passed (RFC 7240; other preferences are ignored).
                 * @example wait=30
                 */
                Prefer?: components["parameters"]["Prefer"];
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The generation. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Preference-Applied": components["headers"]["Preference-Applied"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Generation"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            408: components["responses"]["Error408"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    deleteGeneration: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Deleted"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            408: components["responses"]["Error408"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    cancelGeneration: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The generation (refunded). */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Generation"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            408: components["responses"]["Error408"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    streamGenerationEvents: {
        parameters: {
            query?: never;
            header?: {
                /** @description The `id` of the last event received: the stream resumes after it. */
                "Last-Event-ID"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The event stream. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            408: components["responses"]["Error408"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    getGenerationContent: {
        parameters: {
            query?: never;
            header?: {
                /** @example bytes=0-1023 */
                Range?: string;
                "If-Match"?: string;
                "If-None-Match"?: string;
                "If-Range"?: string;
            };
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The whole file. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Content-Length": string;
                    ETag: string;
                    "Accept-Ranges": "bytes";
                    [name: string]: unknown;
                };
                content: {
                    "*/*": string;
                };
            };
            /** @description The requested range. */
            206: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    "Content-Length": string;
                    ETag: string;
                    "Accept-Ranges": "bytes";
                    "Content-Range": string;
                    [name: string]: unknown;
                };
                content: {
                    "*/*": string;
                };
            };
            /** @description Not modified (If-None-Match). */
            304: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    ETag: string;
                    [name: string]: unknown;
                };
                content?: never;
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            408: components["responses"]["Error408"];
            409: components["responses"]["Error409"];
            410: components["responses"]["Error410"];
            412: components["responses"]["Error412"];
            416: components["responses"]["Error416"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    listUploads: {
        parameters: {
            query?: {
                limit?: components["parameters"]["limit"];
                /** @description The previous page's `nextCursor`. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of uploads. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["UploadList"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            408: components["responses"]["Error408"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    createUpload: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "image/png": string;
                "image/jpeg": string;
                "image/webp": string;
            };
        };
        responses: {
            /** @description Stored. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    /** @description The upload's url. */
                    Location?: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Upload"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            408: components["responses"]["Error408"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
            507: components["responses"]["Error507"];
        };
    };
    getUpload: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The image. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "image/png": string;
                    "image/jpeg": string;
                    "image/webp": string;
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            408: components["responses"]["Error408"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    deleteUpload: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Deleted"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            408: components["responses"]["Error408"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    listWebhookEndpoints: {
        parameters: {
            query?: {
                limit?: components["parameters"]["limit"];
                /** @description The previous page's `nextCursor`. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of endpoints. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpointList"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            408: components["responses"]["Error408"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    createWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookEndpointCreate"];
            };
        };
        responses: {
            /** @description Created, with its secret. */
            201: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    /** @description The endpoint's URL. */
                    Location: string;
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpoint"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            408: components["responses"]["Error408"];
            409: components["responses"]["Error409"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    getWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The endpoint. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookEndpoint"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            408: components["responses"]["Error408"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    deleteWebhookEndpoint: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description Deleted. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Deleted"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            408: components["responses"]["Error408"];
            413: components["responses"]["Error413"];
            415: components["responses"]["Error415"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    receiveStripeEvent: {
        parameters: {
            query?: never;
            header: {
                "Stripe-Signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": Record<string, never>;
            };
        };
        responses: {
            /** @description Received; `outcome` says what it did. */
            200: {
                headers: {
                    [name: string]: unknown;
                };
                content: {
                    "application/json": {
                        /** @constant */
                        received: true;
                        /** @enum {unknown} */
                        outcome: "credited" | "duplicate" | "ignored" | "refused" | "reversed" | "kept" | "reinstated";
                    };
                };
            };
            400: components["responses"]["Error400"];
            404: components["responses"]["Error404"];
            413: components["responses"]["Error413"];
            429: components["responses"]["Error429"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    listWebhookDeliveries: {
        parameters: {
            query?: {
                limit?: components["parameters"]["limit"];
                /** @description The previous page's `nextCursor`. */
                cursor?: components["parameters"]["cursor"];
            };
            header?: never;
            path: {
                id: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description A page of deliveries. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["WebhookDeliveryList"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            404: components["responses"]["Error404"];
            408: components["responses"]["Error408"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    getUsage: {
        parameters: {
            query?: {
                /**
                 * @description First day (default: 29 days before `to`).
                 * @example 2026-11-01
                 */
                from?: string;
                /**
                 * @description Last day (default: today).
                 * @example 2026-11-01
                 */
                to?: string;
                /**
                 * @description One or more of `day`, `model`, `key`, `member`, comma separated; rows are sorted by them in that order.
                 * @example day,model
                 */
                groupBy?: string;
            };
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The range and its rows. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Usage"];
                };
            };
            400: components["responses"]["Error400"];
            401: components["responses"]["Error401"];
            403: components["responses"]["Error403"];
            408: components["responses"]["Error408"];
            429: components["responses"]["Error429"];
            431: components["responses"]["Error431"];
            500: components["responses"]["Error500"];
            503: components["responses"]["Error503"];
        };
    };
    openaiListModels: {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The text models. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OpenAIModelList"];
                };
            };
            400: components["responses"]["OpenAIError400"];
            401: components["responses"]["OpenAIError401"];
            429: components["responses"]["OpenAIError429"];
            500: components["responses"]["OpenAIError500"];
            503: components["responses"]["OpenAIError503"];
        };
    };
    openaiGetModel: {
        parameters: {
            query?: never;
            header?: never;
            path: {
                vendor: string;
                name: string;
            };
            cookie?: never;
        };
        requestBody?: never;
        responses: {
            /** @description The model. */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["OpenAIModel"];
                };
            };
            400: components["responses"]["OpenAIError400"];
            401: components["responses"]["OpenAIError401"];
            404: components["responses"]["OpenAIError404"];
            429: components["responses"]["OpenAIError429"];
            500: components["responses"]["OpenAIError500"];
            503: components["responses"]["OpenAIError503"];
        };
    };
    openaiCreateResponse: {
        parameters: {
            query?: never;
            header?: {
                /** @description As on POST /v1/generations; optional here. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ResponseRequest"];
            };
        };
        responses: {
            /** @description The response (or, with `stream: true`, its events). */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["Response"];
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["OpenAIError400"];
            401: components["responses"]["OpenAIError401"];
            402: components["responses"]["OpenAIError402"];
            403: components["responses"]["OpenAIError403"];
            404: components["responses"]["OpenAIError404"];
            408: components["responses"]["OpenAIError408"];
            409: components["responses"]["OpenAIError409"];
            413: components["responses"]["OpenAIError413"];
            415: components["responses"]["OpenAIError415"];
            422: components["responses"]["OpenAIError422"];
            429: components["responses"]["OpenAIError429"];
            500: components["responses"]["OpenAIError500"];
            503: components["responses"]["OpenAIError503"];
        };
    };
    openaiCreateChatCompletion: {
        parameters: {
            query?: never;
            header?: {
                /** @description As on POST /v1/generations; optional here. */
                "Idempotency-Key"?: string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["ChatCompletionRequest"];
            };
        };
        responses: {
            /** @description The completion (or, with `stream: true`, its chunks). */
            200: {
                headers: {
                    "X-Request-Id": components["headers"]["X-Request-Id"];
                    RateLimit: components["headers"]["RateLimit"];
                    "RateLimit-Policy": components["headers"]["RateLimit-Policy"];
                    [name: string]: unknown;
                };
                content: {
                    "application/json": components["schemas"]["ChatCompletion"];
                    "text/event-stream": string;
                };
            };
            400: components["responses"]["OpenAIError400"];
            401: components["responses"]["OpenAIError401"];
            402: components["responses"]["OpenAIError402"];
            403: components["responses"]["OpenAIError403"];
            404: components["responses"]["OpenAIError404"];
            408: components["responses"]["OpenAIError408"];
            409: components["responses"]["OpenAIError409"];
            413: components["responses"]["OpenAIError413"];
            415: components["responses"]["OpenAIError415"];
            422: components["responses"]["OpenAIError422"];
            429: components["responses"]["OpenAIError429"];
            500: components["responses"]["OpenAIError500"];
            503: components["responses"]["OpenAIError503"];
        };
    };
    "event.generation.started": {
        parameters: {
            query?: never;
            header: {
                "webhook-id": string;
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookEvent"];
            };
        };
        responses: {
            /** @description Delivered. Anything else (or no answer within 15 s) is retried; 410 disables the endpoint. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "event.generation.succeeded": {
        parameters: {
            query?: never;
            header: {
                "webhook-id": string;
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookEvent"];
            };
        };
        responses: {
            /** @description Delivered. Anything else (or no answer within 15 s) is retried; 410 disables the endpoint. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "event.generation.failed": {
        parameters: {
            query?: never;
            header: {
                "webhook-id": string;
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookEvent"];
            };
        };
        responses: {
            /** @description Delivered. Anything else (or no answer within 15 s) is retried; 410 disables the endpoint. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "event.generation.refunded": {
        parameters: {
            query?: never;
            header: {
                "webhook-id": string;
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["WebhookEvent"];
            };
        };
        responses: {
            /** @description Delivered. Anything else (or no answer within 15 s) is retried; 410 disables the endpoint. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "event.account.balance_low": {
        parameters: {
            query?: never;
            header: {
                "webhook-id": string;
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AlertEvent"];
            };
        };
        responses: {
            /** @description Delivered. Anything else (or no answer within 15 s) is retried; 410 disables the endpoint. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
    "event.budget.threshold_reached": {
        parameters: {
            query?: never;
            header: {
                "webhook-id": string;
                "webhook-timestamp": string;
                "webhook-signature": string;
            };
            path?: never;
            cookie?: never;
        };
        requestBody: {
            content: {
                "application/json": components["schemas"]["AlertEvent"];
            };
        };
        responses: {
            /** @description Delivered. Anything else (or no answer within 15 s) is retried; 410 disables the endpoint. */
            "2XX": {
                headers: {
                    [name: string]: unknown;
                };
                content?: never;
            };
        };
    };
}
