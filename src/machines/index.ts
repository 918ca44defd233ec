/** roundtable/machines: the pure statecharts and policies, with no I/O. */
export * from './adoptPolicy.js';
export * from './containerRun.js';
export * from './linePosition.js';
export * from './outputReadPolicy.js';
export * from './recoveryPolicy.js';
export * from './startFailurePolicy.js';
