/** An email address as the studio and the operator's links accept it. */
export const EMAIL = /^[^\s@<>"]{1,64}@[^\s@<>"]{1,190}\.[^\s@<>".]{1,63}$/;
