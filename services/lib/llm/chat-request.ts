/** One part of a multi-part user message: text or an image (an http(s) or `data:` URL). */
export type ChatContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** One message of the conversation sent to the model. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string | ChatContentPart[];
}

/** A function the model may call (OpenAI function calling); `parameters` is a JSON schema. */
export interface ChatTool {
  name: string;
  description?: string;
  parameters: Record<string, unknown>;
}

/** What to ask the model; the client adds the model name and the stream flag. */
export interface ChatRequest {
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  /** Functions offered with `tool_choice: auto`; their calls come back from `answer()`. */
  tools?: ChatTool[];
}

/** A function call the model made: its arguments as it sent them (a JSON string; an object from lenient servers). */
export interface ChatToolCall {
  name: string;
  arguments: unknown;
}

/** The assistant message of a whole answer: its text and the function calls it made (undefined when none). */
export interface ChatAnswer {
  content: string | null;
  toolCalls?: ChatToolCall[];
}
