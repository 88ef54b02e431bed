/** One part of a multi-part user message: text or an image (an http(s) or `data:` URL). */
export type ChatContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** One message of the conversation sent to the model. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string | ChatContentPart[];
}

/** What to ask the model; the client adds the model name and the stream flag. */
export interface ChatRequest {
  messages: ChatMessage[];
  maxTokens?: number;
  temperature?: number;
}
