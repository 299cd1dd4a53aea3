// LISTEN/NOTIFY channels: a new job (payload: model id) and a cancelled generation (payload: its id).
export const JOBS_CHANNEL = 'rendergate_jobs';
export const CANCEL_CHANNEL = 'rendergate_cancel';
