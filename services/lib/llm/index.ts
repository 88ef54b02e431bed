export { ChatCompletionsClient } from './chat-completions-client.js';
export type { ChatAnswer, ChatContentPart, ChatMessage, ChatRequest, ChatTool, ChatToolCall } from './chat-request.js';
export { llmConfigFrom, llmEnvSchema } from './llm-config.js';
export type { LlmConfig, LlmEnv } from './llm-config.js';
export { LlmError } from './llm-error.js';
export type { LlmErrorKind } from './llm-error.js';
export { vlmEndpointFrom, vlmEnvSchema, vlmImageMaxSideSchema, vlmMaxTokensSchema } from './vlm-env.js';
export type { VlmEndpoint, VlmEnv } from './vlm-env.js';
