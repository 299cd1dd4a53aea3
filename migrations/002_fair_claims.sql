-- Fair claiming breaks ties between accounts with as many running renders by who was served least
-- recently: the latest start of each account with queued work, read from this index at every claim.
CREATE INDEX generations_account_started ON generations (account_id, started_at DESC) WHERE started_at IS NOT NULL;
